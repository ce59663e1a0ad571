// The history of every JSON-RPC message both ways (for gRPC, the
// operations), in order, with timings, grouped by conversation (a call,
// its progress, the server's requests during it, its retries after
// input_required), each expandable to its JSON, with "copy as a tako
// command"; the network view of an HTTP server (each request's method,
// status, Mcp-* headers, session id and SSE events); and the OAuth steps.
'use strict';

(() => {
  const {el} = T;
  const hist = new Map(); // seq -> entry, every server
  const maxKept = 20000;
  let oldest = 0;

  const keep = (e) => {
    hist.set(e.seq, e);
    if (hist.size > maxKept) {
      for (const k of hist.keys()) { hist.delete(k); if (hist.size <= maxKept) break; }
    }
  };
  T.on('message', keep);
  T.on('loaded', async (st) => {
    try {
      const r = await T.get(`/api/history?after=${Math.max(0, (st.historySeq || 0) - 5000)}&limit=5000`);
      r.entries.forEach(keep);
      oldest = r.dropped;
      for (const s of T.servers.values()) if (s.tabs.history && s.current === 'history') s.tabs.history.shown();
    } catch (e) { T.say('History: ' + e.message, true); }
  });

  // commandOf is the tako command that sends what a request sent.
  const commandOf = (s, m) => {
    const p = m.params || {};
    switch (m.method) {
      case 'tools/call': return T.command(s, ['call', p.name, JSON.stringify(p.arguments || {})]);
      case 'tools/list': return T.command(s, ['tools']);
      case 'resources/list': return T.command(s, ['resources']);
      case 'resources/templates/list': return T.command(s, ['templates']);
      case 'resources/read': return T.command(s, ['read', p.uri]);
      case 'prompts/list': return T.command(s, ['prompts']);
      case 'prompts/get': return T.command(s, ['prompt', p.name, ...Object.entries(p.arguments || {}).map(([k, v]) => `${k}=${v}`)]);
      case 'ping': return T.command(s, ['ping']);
      case 'initialize': case 'server/discover': return T.command(s, ['info']);
      case 'completion/complete':
        return T.command(s, ['complete', p.ref && p.ref.type === 'ref/prompt' ? '--prompt' : '--resource', p.ref ? (p.ref.name || p.ref.uri) : '', `${p.argument.name}=${p.argument.value}`]);
    }
    return null;
  };

  T.tab('history', 'History', (s, box) => {
    const st = {group: 0, shown: 300};
    const filter = el('input', {type: 'search', placeholder: 'Filter by method or name', 'aria-label': 'Filter the history', class: 'search'});
    const grouped = el('input', {type: 'checkbox', id: T.uid('hg'), checked: true});
    const follow = el('input', {type: 'checkbox', id: T.uid('hf'), checked: true});
    // The pause at input_required is the server's, kept by the inspector:
    // a call held there waits on the Requests page.
    const pause = el('input', {type: 'checkbox', id: T.uid('hp'), class: 'pause', checked: !!s.sum.pause, onchange: () => {
      T.post(T.srvPath(s.sum.id, '/pause'), {on: pause.checked})
        .then((sum) => { s.sum = sum; T.say(sum.pause ? 'Calls answered with input_required will wait for you on the Requests page.' : 'Calls no longer pause at input_required.'); })
        .catch((e) => { pause.checked = !pause.checked; T.fail('Pause')(e); });
    }});
    const groupNote = el('span', {class: 'groupnote'});
    const table = el('table', {class: 'grid history'});
    const tbody = el('tbody');
    table.append(el('thead', {}, el('tr', {}, ['#', 'Time', '', 'Kind', 'Method', 'Size, took'].map((h) => el('th', {scope: 'col'}, h)))), tbody);
    const earlier = el('button', {type: 'button', class: 'link', onclick: () => { st.shown += 500; draw(); }}, 'Show earlier messages');
    box.append(el('div', {class: 'bar'}, filter, el('span', {class: 'opt'}, grouped, el('label', {for: grouped.id}, 'Group conversations')),
      el('span', {class: 'opt'}, follow, el('label', {for: follow.id}, 'Follow')),
      s.sum.features.pause ? el('span', {class: 'opt', title: 'Hold each round a server answers with input_required until you let it go on'}, pause, el('label', {for: pause.id}, 'Pause at input_required')) : null, groupNote),
    el('p', {class: 'muted', hidden: s.sum.features.messages}, 'gRPC carries no JSON-RPC messages: these are the operations the page made.'),
    earlier, el('div', {class: 'scroll'}, table));

    const match = (e) => {
      if (e.server !== s.sum.id) return false;
      if (st.group && e.group !== st.group) return false;
      const f = filter.value.toLowerCase();
      return !f || (e.method || '').toLowerCase().includes(f) || (e.name || '').toLowerCase().includes(f) || (e.label || '').toLowerCase().includes(f);
    };
    const arrow = (e) => e.dir === 'out' ? '→' : e.dir === 'in' ? '←' : '⇄';
    const row = (e) => {
      const first = e.group === e.seq;
      const tr = el('tr', {class: `h ${e.dir} ${e.kind}${grouped.checked && !first ? ' child' : ''}`, 'data-seq': e.seq, 'data-group': e.group, 'data-method': e.method || ''});
      const expand = el('button', {type: 'button', class: 'link', 'aria-expanded': 'false', 'aria-label': `Show message ${e.seq}`}, String(e.seq));
      const groupBtn = e.group && e.label ? el('button', {type: 'button', class: 'link grp', title: 'Show only this conversation', onclick: () => { st.group = st.group ? 0 : e.group; draw(); }}, e.label) : null;
      tr.append(el('td', {}, expand), el('td', {class: 'time'}, T.fmtTime(e.time)),
        el('td', {class: 'dir', title: {out: 'to the server', in: 'from the server', op: 'an operation'}[e.dir]}, arrow(e)),
        el('td', {}, e.kind, e.error ? el('span', {class: 'errcode', title: e.error.message}, ` ${e.error.code} ${T.codeName(e.error.code)}`) : null),
        el('td', {class: 'method'}, e.method || '', e.id ? el('span', {class: 'sub'}, ` #${e.id}`) : null, e.name ? el('span', {class: 'sub'}, ` ${e.name}`) : null, grouped.checked && !first && groupBtn ? el('span', {class: 'sub'}, ' in ', groupBtn) : null),
        el('td', {}, T.fmtBytes(e.size), e.truncated ? ' (cut)' : '', e.ms ? ` · ${T.fmtMs(e.ms)}` : ''));
      let open = null;
      expand.onclick = async () => {
        if (open) { open.remove(); open = null; expand.setAttribute('aria-expanded', 'false'); return; }
        expand.setAttribute('aria-expanded', 'true');
        open = el('tr', {class: 'hbody'}, el('td', {colspan: 6}, el('p', {class: 'muted'}, 'Loading…')));
        tr.after(open);
        try {
          const r = await T.get(`/api/history/${e.seq}`);
          const cmd = r.message && e.dir === 'out' && e.kind === 'request' ? commandOf(s, r.message) : null;
          T.clear(open.firstChild, r.message ? T.jsonView(r.message, true) : el('pre', {class: 'text'}, r.partial),
            r.partial ? el('p', {class: 'muted'}, 'The message was larger than the history keeps: this is its start.') : null,
            el('div', {class: 'buttons'}, cmd ? el('button', {type: 'button', class: 'copycmd', onclick: () => T.copy(cmd, 'the tako command')}, 'Copy as tako command') : null,
              r.message ? el('button', {type: 'button', onclick: () => T.copy(JSON.stringify(r.message, null, 2), 'the message')}, 'Copy the JSON') : null,
              groupBtn ? el('button', {type: 'button', onclick: () => { st.group = e.group; draw(); }}, 'Show its conversation') : null));
        } catch (err) { T.clear(open.firstChild, el('p', {class: 'error'}, err.message)); }
      };
      return tr;
    };
    const draw = () => {
      const all = [...hist.values()].filter(match).sort((a, b) => a.seq - b.seq);
      const shown = all.slice(-st.shown);
      earlier.hidden = shown.length === all.length && !oldest;
      earlier.textContent = shown.length < all.length ? `Show earlier messages (${all.length - shown.length} more)` : oldest ? `${oldest} older messages are no longer kept` : '';
      groupNote.textContent = st.group ? `Showing one conversation. ` : '';
      if (st.group) groupNote.append(el('button', {type: 'button', class: 'link', onclick: () => { st.group = 0; draw(); }}, 'Show all'));
      T.clear(tbody, shown.map((e) => row(e)));
      if (follow.checked) box.querySelector('.scroll').scrollTop = 1e9;
    };
    filter.addEventListener('input', T.debounce(draw, 150));
    grouped.addEventListener('change', draw);
    T.on('message', (e) => {
      if (e.server !== s.sum.id || s.current !== 'history' || !match(e)) return;
      tbody.append(row(e));
      while (tbody.children.length > st.shown + 50) tbody.firstChild.remove();
      if (follow.checked) box.querySelector('.scroll').scrollTop = 1e9;
    });
    return {shown: () => { pause.checked = !!s.sum.pause; draw(); }};
  });

  // The network view.
  T.tab('network', 'Network', (s, box) => {
    const tbody = el('tbody');
    box.append(el('p', {class: 'muted'}, 'Every HTTP request of this server: its method, status, Mcp-* headers, session id, and the events of each SSE stream.'),
      el('div', {class: 'scroll'}, el('table', {class: 'grid net'}, el('thead', {}, el('tr', {}, ['#', 'Time', 'Request', 'JSON-RPC', 'Status', 'Took, size'].map((h) => el('th', {scope: 'col'}, h)))), tbody)));
    const rows = new Map();
    const headers = (h) => el('dl', {class: 'hdrs'}, Object.entries(h || {}).map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
    const row = (n) => {
      const tr = el('tr', {'data-n': n.n, class: n.status >= 400 ? 'bad' : ''});
      const b = el('button', {type: 'button', class: 'link', 'aria-expanded': 'false', 'aria-label': `Show request ${n.n}`}, String(n.n));
      tr.append(el('td', {}, b), el('td', {class: 'time'}, T.fmtTime(n.time)), el('td', {title: n.url}, n.method, el('span', {class: 'sub'}, ` ${(n.url || '').replace(/^[a-z]+:\/\/[^/]+/, '') || '/'}`)),
        el('td', {}, n.rpc || ''), el('td', {class: 'status'}, n.status ? String(n.status) : n.error ? 'error' : '…'),
        el('td', {}, T.fmtMs(n.doneMs || n.ms), ' · ', T.fmtBytes(n.size || 0), n.events && n.events.length ? ` · ${n.events.length} events` : ''));
      let open = null;
      b.onclick = () => {
        if (open) { open.remove(); open = null; b.setAttribute('aria-expanded', 'false'); return; }
        b.setAttribute('aria-expanded', 'true');
        const cur = rows.get(n.n).data;
        open = el('tr', {class: 'hbody'}, el('td', {colspan: 6},
          el('p', {}, `${cur.method} ${cur.url}`, cur.session ? ` · session ${cur.session}` : ''),
          el('h4', {}, 'Request headers'), headers(cur.reqHeaders), el('h4', {}, 'Response headers'), headers(cur.respHeaders),
          cur.error ? el('p', {class: 'error'}, cur.error) : null,
          cur.preview ? [el('h4', {}, 'Body (start)'), el('pre', {class: 'text'}, cur.preview)] : null,
          cur.events && cur.events.length ? [el('h4', {}, `SSE events${cur.droppedEvents ? ` (${cur.droppedEvents} more not kept)` : ''}`),
            el('ol', {class: 'sse'}, cur.events.map((ev) => el('li', {}, `${T.fmtMs(ev.ms)} `, ev.event ? `event: ${ev.event} ` : '', ev.id ? `id: ${ev.id} ` : '',
              ev.retry ? `retry: ${ev.retry} ` : '', el('code', {}, ev.data || '')))) ] : null));
        tr.after(open);
      };
      return {tr, data: n};
    };
    const put = (n) => {
      const old = rows.get(n.n);
      const r = row(n);
      if (old) old.tr.replaceWith(r.tr); else tbody.append(r.tr);
      rows.set(n.n, r);
    };
    s.netPut = put;
    s.netSSE = (m) => {
      const r = rows.get(m.n);
      if (!r) return;
      (r.data.events = r.data.events || []).push(m.event);
      put(r.data);
    };
    return {shown: async () => {
      try { (await T.get(`/api/network?server=${encodeURIComponent(s.sum.id)}`)).entries.forEach((n) => { if (!rows.has(n.n) || !rows.get(n.n).data.done) put(n); }); } catch (e) { T.say('Network: ' + e.message, true); }
    }};
  }, (s) => s.sum.features.network);

  T.onServer('net', (s, n) => { if (s.netPut) s.netPut(n); });
  T.onServer('net-sse', (s, m) => { if (s.netSSE) s.netSSE(m); });

  // The OAuth steps.
  const kinds = {challenge: 'The server asks for a login', 'resource-metadata': 'Protected resource metadata', 'server-metadata': 'Authorization server metadata',
    registration: 'Client registration', authorization: 'Authorization request (in the browser)', token: 'Token request', refresh: 'Refresh', revocation: 'Revocation', request: 'Request'};
  T.onServer('auth', (s, st) => { if (!s.auth.some((x) => x.n === st.n)) { s.auth.push(st); if (s.current === 'auth' && s.drawAuth) s.drawAuth(); } });
  T.on('server', (sum) => { const s = T.srv(sum.id); if (s && s.current === 'auth' && s.drawAuth) s.drawAuth(); });

  T.tab('auth', 'OAuth', (s, box) => {
    const list = el('ol', {class: 'steps', 'aria-label': 'OAuth steps'});
    const top = el('div', {class: 'bar'});
    box.append(top, el('p', {class: 'muted'}, 'Each step of a login, as it went over the wire. Secrets are masked; claims are decoded, not verified.'), list);
    const kv = (o) => el('dl', {class: 'hdrs'}, Object.entries(o || {}).map(([k, v]) => [el('dt', {}, k), el('dd', {}, typeof v === 'string' ? v : JSON.stringify(v))]));
    const step = (st) => el('li', {class: `step ${st.kind}`, 'data-kind': st.kind},
      el('details', {}, el('summary', {}, el('strong', {}, kinds[st.kind] || st.kind), ` ${st.method || ''} ${st.url}`, st.status ? ` → ${st.status}` : '', st.ms ? ` (${T.fmtMs(st.ms)})` : ''),
        st.error ? el('p', {class: 'error'}, st.error) : null,
        st.params ? [el('h4', {}, 'Parameters'), kv(st.params)] : null,
        st.reqHeaders && Object.keys(st.reqHeaders).length ? [el('h4', {}, 'Request headers'), kv(st.reqHeaders)] : null,
        st.sent ? [el('h4', {}, 'Sent'), typeof st.sent === 'object' ? T.jsonView(st.sent, true) : el('pre', {}, st.sent)] : null,
        st.respHeaders && Object.keys(st.respHeaders).length ? [el('h4', {}, 'Response headers'), kv(st.respHeaders)] : null,
        st.got ? [el('h4', {}, 'Answer'), typeof st.got === 'object' ? T.jsonView(st.got, true) : el('pre', {}, st.got)] : null,
        st.claims ? [el('h4', {}, 'JWT claims (decoded, not verified)'), T.jsonView(st.claims, true)] : null));
    const draw = () => {
      T.clear(top, el('button', {type: 'button', onclick: () => T.post(T.srvPath(s.sum.id, '/login')).catch(T.fail('Log in'))}, 'Log in again'),
        s.sum.loginURL ? el('a', {href: s.sum.loginURL, target: '_blank', rel: 'noopener noreferrer', class: 'button loginlink'}, 'Open the authorization page') : null);
      T.clear(list, s.auth.length ? s.auth.map(step) : el('li', {class: 'muted'}, 'No login yet.'));
    };
    s.drawAuth = draw;
    return {shown: async () => {
      try {
        const got = (await T.get(`/api/auth?server=${encodeURIComponent(s.sum.id)}`)).steps;
        const have = new Set(got.map((x) => x.n));
        s.auth = got.concat(s.auth.filter((x) => !have.has(x.n))).sort((a, b) => a.n - b.n);
      } catch (e) { T.say('OAuth: ' + e.message, true); }
      draw();
    }};
  }, (s) => s.sum.features.oauth);
})();
