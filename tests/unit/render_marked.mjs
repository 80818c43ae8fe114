// Renders Markdown with the marked that JupyterLab's Markdown renderer uses (labextension/node_modules), set up
// as JupyterLab sets it up (GitHub-flavoured, async). Reads a JSON list of sources on stdin, writes a JSON list
// of HTML. Used by tests/unit/test_safe_markdown.py.
const MARKED = new URL('../../labextension/node_modules/marked/lib/marked.esm.js', import.meta.url);
const { marked } = await import(MARKED.href);

let input = '';
for await (const chunk of process.stdin) {
  input += chunk;
}
const sources = JSON.parse(input);
const out = [];
for (const source of sources) {
  out.push(await marked.parse(source, { async: true, gfm: true }));
}
process.stdout.write(JSON.stringify(out));
