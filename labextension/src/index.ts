import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'codemode-kernel:plugin',
  description: 'Code Mode: the trace renderer and the Code Mode sidebar.',
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    console.log('codemode-kernel extension activated');
  }
};

export default plugin;
