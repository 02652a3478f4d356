import { ERROR_CODES } from './openapi';

/** Self-hosted HTML (no CDN): the API reference rendered from the OpenAPI document. */
const escape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1d2330}
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #ddd}code,pre{font:13px ui-monospace,monospace;background:#f4f5f7;border-radius:4px}
pre{padding:.75rem;overflow:auto}.verb{display:inline-block;min-width:3.5rem;font-weight:700}.get{color:#0a7}.post{color:#06c}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.3rem .6rem;text-align:left}`;

export function referenceHtml(document: Record<string, unknown>): string {
  const paths = document.paths as Record<string, Record<string, Record<string, unknown>>>;
  const sections = Object.entries(paths)
    .map(([path, methods]) =>
      Object.entries(methods)
        .map(([method, operation]) => {
          const input =
            (operation.requestBody as { content: Record<string, { schema: unknown }> } | undefined)
              ?.content['application/json']?.schema ?? operation.parameters;
          const answer = (
            operation.responses as
              Record<string, { content?: Record<string, { schema: unknown }> }> | undefined
          )?.['200']?.content?.['application/json']?.schema;
          const text = (field: unknown) =>
            typeof field === 'string' ? `<p>${escape(field)}</p>` : '';
          const shape = (title: string, schema: unknown) =>
            schema === undefined
              ? ''
              : `<h3>${title}</h3><pre>${escape(JSON.stringify(schema, null, 2))}</pre>`;
          return `<h2 id="${escape(String(operation.operationId))}"><span class="verb ${method}">${method.toUpperCase()}</span> <code>${escape(path)}</code></h2>
${text(operation.summary)}${text(operation.description)}${shape('Input', input)}${shape('Answer (200)', answer)}`;
        })
        .join('\n'),
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>keyward API reference</title><style>${STYLE}</style></head>
<body><h1>keyward API reference</h1><p>Every request but liveness carries <code>Authorization: Bearer &lt;ROOT_KEY&gt;</code>.
The machine-readable document is <a href="/openapi.json">/openapi.json</a>; error codes are listed at <a href="/docs/errors">/docs/errors</a>.</p>
${sections}</body></html>`;
}

export function errorsHtml(): string {
  const rows = Object.entries(ERROR_CODES)
    .map(
      ([code, { status, when }]) =>
        `<tr id="${code.toLowerCase()}"><td><code>${code}</code></td><td>${status}</td><td>${escape(when)}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>keyward errors</title><style>${STYLE}</style></head>
<body><h1>keyward error codes</h1><p>Every error answers <code>{ "error": { code, message, docs, requestId } }</code>.</p>
<table><tr><th>code</th><th>status</th><th>when</th></tr>${rows}</table></body></html>`;
}
