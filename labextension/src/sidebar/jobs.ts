/**
 * The Background runs section: the kernel's `%%codemode --background` runs, newest first, each with its
 * status, its seconds (counted here while it runs) and its program's first line; a running one has a
 * Cancel button (`%codemode cancel ID`, a silent execution, which waits for a running cell to end).
 */
import { Widget } from '@lumino/widgets';

import { clipCounted, formatDuration } from '../common/format';
import { statusBadge } from '../trace/badge';

import type { IJobInfo } from './api';
import { button, el } from './dom';

/** How the section is made. */
export interface IJobsViewOptions {
  onCancel: (job: IJobInfo) => void;
  /** The clock (ms since the epoch); tests pass their own. */
  now?: () => number;
}

/** A run's seconds: its duration once ended, else the time since it started. */
export function jobSeconds(job: IJobInfo, now: number): string {
  const ms = job.seconds !== null ? job.seconds * 1000 : job.started !== null ? now - job.started : null;
  return ms === null ? '' : formatDuration(Math.max(0, ms), 'compact');
}

/** Lists the kernel's background runs. */
export class JobsView extends Widget {
  constructor(options: IJobsViewOptions) {
    super();
    this._onCancel = options.onCancel;
    this._now = options.now ?? Date.now;
    this.addClass('jp-codemode-sidebar-section');
    this.addClass('jp-codemode-sidebar-jobs');
    this.title.label = 'Background runs';
    this.setJobs([]);
  }

  /** Shows `jobs` (newest first). */
  setJobs(jobs: IJobInfo[]): void {
    this._jobs = jobs;
    if (!jobs.length) {
      this.node.replaceChildren(
        el('p', {
          cls: 'empty',
          text: 'No background runs. %%codemode --background (or Run Cell in Background) starts one.'
        })
      );
    } else {
      const list = el('ul', { cls: 'list', attrs: { 'aria-label': 'Background runs' } });
      list.append(...jobs.map(job => this._row(job)));
      this.node.replaceChildren(list);
    }
    this._clock();
  }

  dispose(): void {
    window.clearInterval(this._timer);
    super.dispose();
  }

  private _row(job: IJobInfo): HTMLElement {
    const running = job.seconds === null && (job.status === 'running' || job.status === 'cancelling');
    const head = el('div', { cls: 'job-head' }, [
      statusBadge(job.status),
      el('span', { cls: 'job-id', text: clipCounted(job.id, 64) }),
      el('span', { cls: 'job-seconds', text: jobSeconds(job, this._now()) })
    ]);
    if (job.status === 'running') {
      head.appendChild(button('Cancel', () => this._onCancel(job), 'job-cancel'));
    }
    const row = el('li', { cls: ['job', running ? 'job-running' : 'job-ended'] }, [
      head,
      el('div', { cls: 'job-line', text: clipCounted(job.firstLine, 200), title: job.firstLine })
    ]);
    row.dataset.job = job.id;
    return row;
  }

  /** While a run is running, its seconds count up once a second. */
  private _clock(): void {
    window.clearInterval(this._timer);
    if (!this._jobs.some(job => job.seconds === null)) {
      return;
    }
    this._timer = window.setInterval(() => {
      for (const job of this._jobs) {
        const row = this.node.querySelector(`[data-job="${CSS.escape(job.id)}"]`);
        const cell = row?.querySelector('.jp-codemode-sidebar-job-seconds');
        if (cell) {
          cell.textContent = jobSeconds(job, this._now());
        }
      }
    }, 1000);
  }

  private _onCancel: (job: IJobInfo) => void;
  private _now: () => number;
  private _jobs: IJobInfo[] = [];
  private _timer = 0;
}
