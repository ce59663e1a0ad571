// Results, shown by content kind: text, images, audio, resource links,
// embedded resources, structured content with the output schema's
// verdict; and the viewers for images, audio, PDF, CSV, JSON and HTML
// (HTML in a sandboxed frame with no scripts). A result the inspector cut
// (a 16 MiB text) shows its start and a download of the whole.
'use strict';

(() => {
  const {el} = T;

  const b64bytes = (b64) => { const s = atob(b64); const a = new Uint8Array(s.length); for (let i = 0; i < s.length; i++) a[i] = s.charCodeAt(i); return a; };
  const blobURL = (b64, mime) => URL.createObjectURL(new Blob([b64bytes(b64)], {type: mime}));

  // download is a link to a run's whole result.
  T.download = (run, label) => el('a', {href: T.withToken(`/api/runs/${encodeURIComponent(run.id)}/download`), download: `tako-${run.id}.json`, class: 'download'},
    label || `Download the whole result (${T.fmtBytes(run.size || 0)})`);

  // csvTable parses CSV (RFC 4180 quotes) into a table of at most 200 rows.
  const csvTable = (text) => {
    const rows = [];
    let row = [], cur = '', q = false;
    for (let i = 0; i < text.length && rows.length < 201; i++) {
      const c = text[i];
      if (q) {
        if (c === '"' && text[i + 1] === '"') { cur += '"'; i++; } else if (c === '"') q = false; else cur += c;
      } else if (c === '"') q = true;
      else if (c === ',') { row.push(cur); cur = ''; } else if (c === '\n' || c === '\r') {
        if (c === '\r' && text[i + 1] === '\n') i++;
        row.push(cur); rows.push(row); row = []; cur = '';
      } else cur += c;
    }
    if (cur !== '' || row.length) { row.push(cur); rows.push(row); }
    const [head, ...body] = rows;
    return el('div', {class: 'csv'}, el('table', {},
      head ? el('thead', {}, el('tr', {}, head.map((h) => el('th', {scope: 'col'}, h)))) : null,
      el('tbody', {}, body.slice(0, 200).map((r) => el('tr', {}, r.map((c) => el('td', {}, c)))))),
    rows.length > 200 ? el('p', {class: 'muted'}, 'The first 200 rows.') : null);
  };

  // htmlFrame shows HTML in a frame that runs no script and reaches no
  // network (frames.go); the frame's document is a single-use capability.
  T.htmlFrame = (html, title) => {
    const box = el('div', {class: 'htmlview'});
    const frame = el('iframe', {sandbox: '', title: title || 'HTML content', class: 'htmlframe', referrerpolicy: 'no-referrer'});
    box.append(frame);
    T.post('/api/frames', {html}).then((r) => { frame.src = r.url; }).catch(T.fail('HTML view'));
    return box;
  };

  // view shows data of a MIME type: b64 for binary, text for text.
  T.viewData = (mime, b64, text, name) => {
    const m = (mime || '').toLowerCase().split(';')[0].trim();
    if (b64 !== undefined && b64 !== null) {
      if (m.startsWith('image/')) return el('img', {class: 'img', src: `data:${m};base64,${b64}`, alt: name || `an image (${m})`});
      if (m.startsWith('audio/')) return el('audio', {controls: true, src: `data:${m};base64,${b64}`, 'aria-label': name || `audio (${m})`});
      if (m.startsWith('video/')) return el('video', {controls: true, src: blobURL(b64, m), 'aria-label': name || 'video', class: 'img'});
      if (m === 'application/pdf') {
        const u = blobURL(b64, m);
        return el('div', {class: 'pdf'}, el('object', {type: 'application/pdf', data: u, 'aria-label': name || 'PDF document'},
          el('p', {}, 'This browser shows no PDF here: ', el('a', {href: u, download: name || 'document.pdf'}, 'download it'))),
        el('a', {href: u, download: name || 'document.pdf'}, 'Download the PDF'));
      }
      try { text = new TextDecoder().decode(b64bytes(b64)); } catch (e) { return el('p', {}, `${m || 'binary'} data, ${Math.round(b64.length * 3 / 4)} bytes`); }
      if (!/^(text\/|application\/(json|xml|csv|javascript))/.test(m) && /[\x00-\x08\x0e-\x1f]/.test(text.slice(0, 1000))) {
        return el('p', {}, `${m || 'binary'} data, ${Math.round(b64.length * 3 / 4)} bytes`);
      }
    }
    text = text || '';
    if (m === 'text/csv') return csvTable(text);
    if (m === 'text/html' || m.startsWith('text/html')) {
      return el('div', {}, T.htmlFrame(text, name), el('details', {}, el('summary', {}, 'Source'), el('pre', {class: 'text'}, text)));
    }
    if (m === 'application/json' || m.endsWith('+json')) {
      try { return T.jsonView(JSON.parse(text), true); } catch (e) { /* shown as text */ }
    }
    return el('pre', {class: 'text'}, text);
  };

  const cutNote = (run, n) => el('p', {class: 'cut'}, `Cut for the page: ${T.fmtBytes(n)} in all. `, run ? T.download(run) : null);

  // block renders one content block.
  T.block = (b, run, s) => {
    switch (b.type) {
      case 'text': {
        const box = el('div', {class: 'block text', 'data-kind': 'text'}, el('pre', {class: 'text'}, b.text));
        if (b.textCut) box.append(cutNote(run, b.textCut));
        else if (/^\s*[[{]/.test(b.text)) {
          try { const v = JSON.parse(b.text); box.append(el('details', {}, el('summary', {}, 'As JSON'), T.jsonView(v, true))); } catch (e) { /* not JSON */ }
        }
        return box;
      }
      case 'image':
      case 'audio':
        if (b.dataOmitted) return el('div', {class: `block ${b.type}`}, el('p', {}, `${b.type} (${b.mimeType}), ${T.fmtBytes(b.dataOmitted * 3 / 4)}`), cutNote(run, b.dataOmitted));
        return el('div', {class: `block ${b.type}`, 'data-kind': b.type}, T.viewData(b.mimeType, b.data, null, `${b.type} from the tool`),
          el('div', {class: 'meta'}, `${b.type} · ${b.mimeType}`));
      case 'resource_link':
        return el('div', {class: 'block link', 'data-kind': 'resource_link'}, 'Resource link: ',
          el('button', {type: 'button', class: 'link', onclick: () => T.openResource && T.openResource(s, b.uri)}, b.name || b.uri),
          el('span', {class: 'meta'}, ` ${b.uri}${b.mimeType ? ' · ' + b.mimeType : ''}`), b.description ? el('div', {class: 'help'}, b.description) : null);
      case 'resource': {
        const r = b.resource || {};
        return el('div', {class: 'block resource', 'data-kind': 'resource'}, el('div', {class: 'meta'}, `Embedded resource ${r.uri || ''}${r.mimeType ? ' · ' + r.mimeType : ''}`),
          T.contents(r, run));
      }
      default:
        return el('div', {class: 'block'}, el('div', {class: 'meta'}, `A ${b.type} block`), T.jsonView(b, false));
    }
  };

  // contents shows one resource's contents.
  T.contents = (c, run) => {
    if (c.textCut) return el('div', {}, el('pre', {class: 'text'}, c.text), cutNote(run, c.textCut));
    if (c.blobOmitted) return cutNote(run, c.blobOmitted);
    return T.viewData(c.mimeType || (c.text !== undefined ? 'text/plain' : ''), c.blob, c.text, c.uri);
  };

  const verdict = (run) => {
    if (!run.verdict) return null;
    const ok = run.verdict === 'ok';
    return el('div', {class: `verdict ${ok ? 'ok' : 'bad'}`, role: ok ? undefined : 'alert'},
      ok ? 'structuredContent conforms to the output schema' : `structuredContent ${run.verdict}`);
  };

  // result renders a tool call's result (run.view).
  T.result = (run, s) => {
    const box = el('div', {class: 'result', 'data-run': run.id, 'data-state': run.state});
    const head = el('div', {class: 'rhead'}, el('strong', {}, {done: run.isError ? 'Tool error' : 'Result', failed: 'Failed', cancelled: 'Cancelled', running: 'Running'}[run.state] || run.state),
      run.ms ? ` in ${T.fmtMs(run.ms)}` : '', run.size ? ` · ${T.fmtBytes(run.size)}` : '', run.taskId ? ` · task ${run.taskId}` : '');
    box.append(head);
    if (run.error) box.append(el('div', {class: 'error', role: 'alert'}, run.errorCode ? `Error ${run.errorCode} (${T.codeName(run.errorCode)}): ` : '', run.error));
    const v = run.view;
    if (!v) return box;
    if (run.isError) box.append(el('div', {class: 'error', role: 'alert'}, 'The tool reported an error (isError).'));
    (v.content || []).forEach((b) => box.append(T.block(b, run, s)));
    if (v.structuredContent !== undefined) {
      box.append(el('div', {class: 'block structured', 'data-kind': 'structured'}, el('div', {class: 'meta'}, 'structuredContent'), T.jsonView(v.structuredContent, true)));
    }
    const vd = verdict(run);
    if (vd) box.append(vd);
    if (v._meta) box.append(el('details', {}, el('summary', {}, '_meta'), T.jsonView(v._meta, true)));
    if (run.cut) box.append(cutNote(run, run.size));
    box.append(el('div', {class: 'rfoot'}, el('details', {}, el('summary', {}, 'The result as JSON'), T.jsonView(v, false)), run.size ? T.download(run, 'Download') : null));
    return box;
  };

  // codeName names a JSON-RPC error code.
  T.codeName = (c) => ({'-32700': 'parse error', '-32600': 'invalid request', '-32601': 'method not found', '-32602': 'invalid params',
    '-32603': 'internal error', '-32002': 'resource not found', '-32042': 'URL elicitation required', '-32020': 'header mismatch',
    '-32021': 'missing required client capability', '-32022': 'unsupported protocol version', '-1': 'declined'})[String(c)] || 'error';

  // messages renders a prompt's or a sampling request's messages.
  T.messages = (msgs, run, s) => el('ol', {class: 'messages'}, (msgs || []).map((m) => {
    const blocks = Array.isArray(m.content) ? m.content : [m.content];
    return el('li', {class: `msg ${m.role}`}, el('div', {class: 'role'}, m.role), blocks.filter(Boolean).map((b) => T.block(b, run, s)));
  }));
})();
