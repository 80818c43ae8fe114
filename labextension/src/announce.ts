/**
 * Tells each Code Mode kernel that this frontend renders the trace MIME type, so a running cell's live
 * view is the trace itself, updated in place, instead of the ipywidgets view other frontends get.
 *
 * The kernel listens on the `codemode.frontend` comm target; a comm dies with a restart, so it is opened
 * again whenever the kernel is back and the last one is gone.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { Kernel } from '@jupyterlab/services';

export const FRONTEND_COMM_TARGET = 'codemode.frontend';
export const CODEMODE_KERNEL = 'codemode';

const comms = new WeakMap<Kernel.IKernelConnection, Kernel.IComm>();

/** Open the comm on the session's kernel if it is a Code Mode kernel without a live one. */
export function announce(session: ISessionContext, mimeTypes: string[]): void {
  const kernel = session.session?.kernel;
  if (!kernel || kernel.name !== CODEMODE_KERNEL || kernel.connectionStatus !== 'connected') {
    return;
  }
  if (kernel.status === 'restarting' || kernel.status === 'dead' || kernel.status === 'unknown') {
    return;
  }
  const existing = comms.get(kernel);
  if (existing && !existing.isDisposed) {
    return;
  }
  try {
    const comm = kernel.createComm(FRONTEND_COMM_TARGET);
    comm.open({ mime_types: mimeTypes });
    comms.set(kernel, comm);
  } catch (reason) {
    console.warn('codemode: could not announce the trace renderer to the kernel', reason);
  }
}

/** Keep announcing for a notebook's session: at start, after kernel changes and restarts. */
export function announceFor(session: ISessionContext, mimeTypes: string[]): void {
  const again = (): void => announce(session, mimeTypes);
  session.kernelChanged.connect(again);
  session.statusChanged.connect(again);
  session.connectionStatusChanged.connect(again);
  void session.ready.then(again);
}
