// MCP Apps: a tool whose _meta names a ui:// resource has an app, an HTML
// page the server wrote. The inspector is its host: the page is loaded
// into a frame sandboxed without same-origin (frames.go: its own CSP, no
// network, a single-use URL), and spoken to by postMessage, JSON-RPC 2.0,
// the host side of the Apps protocol: ui/initialize, the tool's input
// and result, the app's tools/call and resources/read (passed to the
// server through the page's API, so that they are in the history),
// ui/open-link (shown to the person, never followed by itself),
// ui/message, ui/notifications/size-changed and logging. Only messages
// from the frame's own window are heard.
'use strict';

(() => {
  const {el} = T;
  const protocolVersion = '2026-01-26';

  // waitRun resolves when the run id has ended, with its state.
  const waitRun = (s, id) => new Promise((resolve) => {
    const done = (r) => r && r.state !== 'running';
    const known = s.runs.get(id);
    if (done(known)) { resolve(known); return; }
    const f = (r) => { if (r.id === id && done(r)) { T.handlers.run = T.handlers.run.filter((x) => x !== f); resolve(r); } };
    T.on('run', f);
  });

  T.openApp = async (s, tool, uri, run, box) => {
    let frame;
    const log = el('ol', {class: 'applog', 'aria-label': 'What the app did'});
    const say = (...parts) => { log.append(el('li', {}, ...parts)); while (log.children.length > 200) log.firstChild.remove(); };
    T.clear(box, el('h4', {}, `App ${uri}`), el('p', {class: 'muted'}, 'Sandboxed: it runs its scripts but reaches neither this page nor the network.'));
    let r;
    try {
      r = await T.post('/api/frames', {server: s.sum.id, uri, app: true});
    } catch (e) { box.append(el('p', {class: 'error'}, `The app's resource: ${e.message}`)); return; }
    frame = el('iframe', {sandbox: 'allow-scripts', title: `The app of ${tool.name}`, class: 'appframe', referrerpolicy: 'no-referrer'});
    box.append(frame, el('h4', {}, 'Messages'), log);

    const post = (m) => frame.contentWindow && frame.contentWindow.postMessage(m, '*');
    const reply = (id, result) => post({jsonrpc: '2.0', id, result});
    const fail = (id, code, message) => post({jsonrpc: '2.0', id, error: {code, message}});
    let initialized = false, greeted = false;
    const sendToolData = () => {
      post({jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: {arguments: JSON.parse(JSON.stringify(run.arguments || {}))}});
      if (run.view) post({jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: run.view});
    };
    const handle = async (m) => {
      const isReq = m.id !== undefined && m.method;
      switch (m.method) {
        case 'ui/initialize':
          greeted = true;
          say('initialize');
          reply(m.id, {protocolVersion, hostInfo: {name: 'tako inspect', version: '1'},
            hostCapabilities: {serverTools: {}, serverResources: {}, logging: {}, openLinks: {}},
            hostContext: {theme: 'light', displayMode: 'inline', toolInfo: {tool: {name: tool.name, title: tool.title, description: tool.description}}}});
          return;
        case 'ui/notifications/initialized':
          initialized = true;
          say('initialized');
          sendToolData();
          return;
        case 'tools/call': {
          const p = m.params || {};
          say('tools/call ', el('code', {}, p.name));
          try {
            const started = await T.post(T.srvPath(s.sum.id, '/call'), {name: p.name, arguments: p.arguments || {}});
            const done = await waitRun(s, started.id);
            if (done.state === 'done' && done.view) reply(m.id, done.view);
            else fail(m.id, done.errorCode || -32603, done.error || done.state);
          } catch (e) { fail(m.id, -32603, e.message); }
          return;
        }
        case 'resources/read': {
          const p = m.params || {};
          say('resources/read ', el('code', {}, p.uri));
          try {
            const rr = await T.post(T.srvPath(s.sum.id, '/read'), {uri: p.uri});
            if (rr.view) reply(m.id, rr.view); else fail(m.id, rr.errorCode || -32603, rr.error || 'failed');
          } catch (e) { fail(m.id, -32603, e.message); }
          return;
        }
        case 'ui/open-link': {
          const url = String((m.params || {}).url || '');
          const ok = /^https?:\/\//i.test(url);
          say('The app asks to open ', ok ? el('a', {href: url, target: '_blank', rel: 'noopener noreferrer'}, url) : el('code', {}, url), ok ? ' (follow it if you want)' : ' (not an http link: refused)');
          if (ok) reply(m.id, {}); else fail(m.id, -32602, 'only http and https links are opened');
          return;
        }
        case 'ui/message': {
          const p = m.params || {};
          const blocks = Array.isArray(p.content) ? p.content : [p.content];
          say('The app says (as ', p.role || 'user', '): ', blocks.filter(Boolean).map((b) => b.text || JSON.stringify(b)).join(' '));
          reply(m.id, {});
          return;
        }
        case 'ui/update-model-context':
          say('model context: ', JSON.stringify(m.params || {}).slice(0, 300));
          reply(m.id, {});
          return;
        case 'ui/notifications/size-changed': {
          const h = Number((m.params || {}).height);
          if (h > 0) frame.style.height = `${Math.min(Math.max(h, 50), 2000)}px`;
          return;
        }
        case 'notifications/message':
          say('log ', (m.params || {}).level || '', ': ', JSON.stringify((m.params || {}).data));
          return;
        case 'ping':
          reply(m.id, {});
          return;
      }
      if (isReq) fail(m.id, -32601, `the host does not know ${m.method}`);
    };
    const listener = (ev) => {
      if (!frame.isConnected) { window.removeEventListener('message', listener); return; }
      if (ev.source !== frame.contentWindow) return;
      const m = ev.data;
      if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') return;
      handle(m);
    };
    window.addEventListener('message', listener);
    frame.src = r.url;
    frame.addEventListener('load', () => { if (!greeted) say('loaded; waiting for ui/initialize'); });
  };
})();
