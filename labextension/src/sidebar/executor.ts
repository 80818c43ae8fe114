/**
 * The Executor section: where the kernel runs programs. "This machine" for the local backend; for a Ray
 * cluster one line for the cluster (nodes alive, this kernel's runs and its queue) and a row per node (its
 * short id, address, CPUs, and the workers prepared and running there). The kernel asks the cluster every
 * 2 s on a thread of its own; when the cluster fails or is slow to answer, the last answer stays and the
 * section says why.
 */
import { Widget } from '@lumino/widgets';

import { clipCounted, plural } from '../common/format';
import { SHORT_NODE } from '../trace/format';

import type { IExecutorInfo, IExecutorNode } from './api';
import { el } from './dom';

/** The cluster's line: `Ray cluster at ADDRESS: N of M nodes alive, R running, Q queued`. */
export function clusterSummary(info: IExecutorInfo): string {
  const head = `Ray cluster at ${clipCounted(info.address || 'auto', 200)}`;
  if (info.nodes === null) {
    return head;
  }
  const alive = info.nodes.filter(node => node.alive).length;
  const nodes = `${alive} of ${plural(info.nodes.length, 'node')} alive`;
  return `${head}: ${nodes}, ${info.running ?? 0} running, ${info.queued ?? 0} queued`;
}

/** A node's facts after its id: CPUs, then its workers, or that it is dead or not used yet. */
export function nodeFacts(node: IExecutorNode): string {
  if (!node.alive) {
    return 'dead';
  }
  const facts = node.cpus !== null ? [plural(node.cpus, 'CPU')] : [];
  if (node.prepared === null && node.running === null) {
    facts.push('no runs yet');
  } else {
    facts.push(`${node.prepared ?? 0} prepared`, `${node.running ?? 0} running`);
  }
  return facts.join(' · ');
}

/** Shows the kernel's executor. */
export class ExecutorView extends Widget {
  constructor() {
    super();
    this.addClass('jp-codemode-sidebar-section');
    this.addClass('jp-codemode-sidebar-executor');
    this.title.label = 'Executor';
    this.setExecutor(null);
  }

  /** Shows `info` (null: the kernel has not said, as before its tools started). */
  setExecutor(info: IExecutorInfo | null): void {
    if (info === null) {
      this.node.replaceChildren(
        el('p', { cls: 'empty', text: 'The kernel says where programs run once its tools have started.' })
      );
      return;
    }
    if (info.backend === 'local') {
      this.node.replaceChildren(
        el('div', { cls: 'executor-summary', text: 'This machine' }),
        el('div', { cls: 'executor-meta', text: 'Each program runs in a sandboxed worker process here.' })
      );
      return;
    }
    if (info.backend !== 'ray') {
      this.node.replaceChildren(
        el('div', { cls: 'executor-summary', text: `Backend ${clipCounted(info.backend || 'unknown', 80)}` })
      );
      return;
    }
    this.node.replaceChildren(...this._cluster(info));
  }

  private _cluster(info: IExecutorInfo): HTMLElement[] {
    const parts: HTMLElement[] = [el('div', { cls: 'executor-summary', text: clusterSummary(info) })];
    if (info.problem) {
      parts.push(el('div', { cls: 'executor-problem', text: clipCounted(info.problem, 2000) }));
    }
    if (info.nodes === null) {
      if (!info.problem) {
        parts.push(el('div', { cls: 'executor-meta', text: 'Waiting for the cluster to answer…' }));
      }
      return parts;
    }
    const list = el('ul', { cls: 'list', attrs: { 'aria-label': 'Ray nodes' } });
    for (const node of info.nodes) {
      list.appendChild(this._row(node));
    }
    parts.push(info.nodes.length ? list : el('p', { cls: 'empty', text: 'The cluster lists no node.' }));
    return parts;
  }

  private _row(node: IExecutorNode): HTMLElement {
    const state = node.alive ? 'alive' : 'dead';
    return el('li', { cls: ['node', `node-${state}`] }, [
      el('div', { cls: 'node-head' }, [
        el('span', {
          cls: ['dot', node.alive ? 'dot-ready' : 'dot-failed'],
          attrs: { 'aria-hidden': 'true' }
        }),
        el('span', {
          cls: 'node-id',
          text: clipCounted(node.node.slice(0, SHORT_NODE), 40),
          title: `Ray node ${node.node}`
        }),
        // Cut with an ellipsis when the panel is narrow: the whole address is in its title.
        el('span', { cls: 'node-address', text: clipCounted(node.address, 200), title: node.address })
      ]),
      el('div', { cls: 'node-meta', text: nodeFacts(node) })
    ]);
  }
}
