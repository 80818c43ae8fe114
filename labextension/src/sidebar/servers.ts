/**
 * The Servers section: each MCP server's state, tool count, error and fix, and a Reconnect button; a
 * server waiting for its person's sign-in gets a "Sign in" link (the kernel's authorization link, opened in
 * a new tab), or a "Sign in" button that asks the kernel for a new link.
 */
import { Widget } from '@lumino/widgets';

import { clipCounted } from '../common/format';

import type { IServerInfo } from './api';
import { button, el } from './dom';

/** States with a colour of their own; any other state gets the neutral dot. */
const KNOWN_STATES = new Set(['ready', 'connecting', 'failed', 'signin', 'disabled', 'closed']);

/** What the Servers section needs from the sidebar. */
export interface IServersViewOptions {
  onReconnect: (server: string) => void;
  /** Asks the kernel for a new sign-in link (`%codemode login`). */
  onSignIn: (server: string) => void;
}

/** Lists the servers of the kernel's state. */
export class ServersView extends Widget {
  constructor(private readonly _options: IServersViewOptions) {
    super();
    this.addClass('jp-codemode-sidebar-section');
    this.addClass('jp-codemode-sidebar-servers');
    this.title.label = 'Servers';
    this.setServers([]);
  }

  /** Shows `servers` (replacing what was shown). */
  setServers(servers: IServerInfo[]): void {
    const list = el('ul', { cls: 'list', attrs: { 'aria-label': 'MCP servers' } });
    for (const server of servers) {
      list.appendChild(this._row(server));
    }
    this.node.replaceChildren(
      servers.length ? list : el('p', { cls: 'empty', text: 'No MCP servers are configured.' })
    );
  }

  private _row(server: IServerInfo): HTMLElement {
    const state = KNOWN_STATES.has(server.state) ? server.state : 'other';
    const tools = `${server.toolCount} tool${server.toolCount === 1 ? '' : 's'}`;
    return el('li', { cls: ['server', `server-${state}`] }, [
      el('div', { cls: 'server-head' }, [
        el('span', { cls: ['dot', `dot-${state}`], attrs: { 'aria-hidden': 'true' } }),
        el('span', { cls: 'server-name', text: clipCounted(server.name, 200), title: server.name }),
        el('span', { cls: 'server-state', text: clipCounted(server.state, 40) }),
        button('Reconnect', () => this._options.onReconnect(server.name), 'reconnect')
      ]),
      el('div', {
        cls: 'server-meta',
        text: [clipCounted(server.transport, 100), tools].filter(Boolean).join(' · ')
      }),
      this._signIn(server),
      server.error && !server.signinUrl
        ? el('div', { cls: 'server-error', text: clipCounted(server.error) })
        : null,
      server.fix && !server.signinUrl
        ? el('div', { cls: 'server-fix', text: `Fix: ${clipCounted(server.fix)}` })
        : null
    ]);
  }

  /** The row's way to sign in: the kernel's link while one waits, else a button asking for one. */
  private _signIn(server: IServerInfo): HTMLElement | null {
    if (server.signinUrl) {
      const link = el('a', {
        cls: 'signin-link',
        text: `Sign in to ${clipCounted(server.name, 80)}`,
        title: 'Opens the sign-in page in a new tab; the tools appear once you are signed in',
        attrs: { href: server.signinUrl, target: '_blank', rel: 'noopener noreferrer' }
      });
      const note = ' (a new tab; its tools arrive here once you are signed in)';
      return el('div', { cls: 'server-signin' }, [link, el('span', { cls: 'server-meta', text: note })]);
    }
    if (server.state !== 'signin') {
      return null;
    }
    return el('div', { cls: 'server-signin' }, [
      button('Sign in', () => this._options.onSignIn(server.name), 'signin')
    ]);
  }
}
