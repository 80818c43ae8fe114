/** The sidebar's tab icon: a pair of code brackets around a bolt, drawn for this project. */
import { LabIcon } from '@jupyterlab/ui-components';

const svgstr = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M7.4 5.6 1 12l6.4 6.4 1.4-1.4L3.8 12l5-5z"/>
    <path d="M16.6 5.6 15.2 7l5 5-5 5 1.4 1.4L23 12z"/>
    <path d="M13.5 3 8 13h3.5L10 21l6-11h-3.6z"/>
  </g>
</svg>`;

/** The icon shown on the sidebar's tab (its title.icon). */
export const codeModeIcon = new LabIcon({ name: 'codemode-kernel:sidebar', svgstr });
