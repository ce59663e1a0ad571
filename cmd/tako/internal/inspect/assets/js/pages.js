// The other pages of a server: its info and ping; resources and
// templates (read, subscribe, updates as they come); prompts (arguments
// completed as one types, messages rendered); the server's requests to
// the person (elicitation forms, sampling) and the roots; tasks;
// notifications and logs with the log level.
'use strict';

(() => {
  const {el} = T;

  T.tab('info', 'Info', (s, box) => {
    const latency = el('span', {class: 'latency', 'aria-live': 'polite'});
    const draw = () => {
      const sum = s.sum;
      const i = sum.info;
      T.clear(box,
        el('dl', {class: 'facts'},
          el('dt', {}, 'State'), el('dd', {}, sum.state, sum.error ? ` — ${sum.error}` : ''),
          el('dt', {}, 'Transport'), el('dd', {}, `${sum.kind} ${sum.target}`),
          i ? [el('dt', {}, 'Server'), el('dd', {class: 'srvname'}, `${i.serverInfo.name} ${i.serverInfo.version || ''}${i.serverInfo.title ? ' (' + i.serverInfo.title + ')' : ''}`),
            el('dt', {}, 'Protocol revision'), el('dd', {}, i.protocolVersion),
            el('dt', {}, 'Notifications'), el('dd', {}, i.notifications ? 'delivered' : 'none on this transport')] : null,
          sum.sessionId ? [el('dt', {}, 'Session id'), el('dd', {}, el('code', {}, sum.sessionId))] : null,
          el('dt', {}, 'Command line'), el('dd', {}, el('code', {}, T.command(s, ['info'])))),
        el('div', {class: 'buttons'}, el('button', {type: 'button', class: 'ping', disabled: !T.connected(s), onclick: async () => {
          latency.textContent = '…';
          try { const r = await T.post(T.srvPath(s.sum.id, '/ping')); latency.textContent = `answered in ${T.fmtMs(r.ms)}`; } catch (e) { latency.textContent = e.message; }
        }}, 'Ping'), latency),
        i && i.instructions ? el('section', {}, el('h3', {}, 'Instructions'), el('pre', {class: 'text instructions'}, i.instructions)) : null,
        i ? el('section', {}, el('h3', {}, 'Capabilities'), T.jsonView(i.capabilities, true)) : null);
    };
    return {shown: draw};
  });

  // Resources.
  T.tab('resources', 'Resources', (s, box) => {
    const st = {res: null, tmpl: null, uri: null, filter: ''};
    const search = el('input', {type: 'search', placeholder: 'Search resources', 'aria-label': 'Search resources', class: 'search'});
    const list = el('ul', {class: 'list', 'aria-label': 'Resources'});
    const tlist = el('ul', {class: 'list', 'aria-label': 'Resource templates'});
    const detail = el('div', {class: 'detail'});
    box.append(el('div', {class: 'split'}, el('div', {class: 'side'},
      el('div', {class: 'bar'}, search, el('button', {type: 'button', onclick: () => load(true)}, 'Refresh')),
      el('h3', {}, 'Resources'), list, el('h3', {}, 'Templates'), tlist), detail));
    const draw = () => {
      const f = st.filter.toLowerCase();
      const match = (r) => !f || (r.uri || r.uriTemplate || '').toLowerCase().includes(f) || (r.name || '').toLowerCase().includes(f);
      T.clear(list, (st.res || []).filter(match).slice(0, 500).map((r) => el('li', {},
        el('button', {type: 'button', class: `item${st.uri === r.uri ? ' on' : ''}`, 'data-uri': r.uri, onclick: () => open(r.uri, r)},
          el('span', {class: 'name'}, r.title || r.name || r.uri), el('span', {class: 'sub'}, r.uri), r.mimeType ? el('span', {class: 'tag'}, r.mimeType) : null,
          s.sum.subscriptions.includes(r.uri) ? el('span', {class: 'tag on'}, 'subscribed') : null))));
      T.clear(tlist, (st.tmpl || []).filter(match).map((t) => el('li', {},
        el('button', {type: 'button', class: 'item', 'data-template': t.uriTemplate, onclick: () => template(t)}, el('span', {class: 'name'}, t.title || t.name), el('span', {class: 'sub'}, t.uriTemplate)))));
    };
    search.addEventListener('input', T.debounce(() => { st.filter = search.value; draw(); }, 120));
    const load = async (force) => {
      if (!T.connected(s)) { T.clear(detail, T.notConnected(s)); return; }
      if (st.res && !force) { draw(); return; }
      try { const r = await T.get(T.srvPath(s.sum.id, '/resources')); st.res = r.resources; st.tmpl = r.templates; draw(); } catch (e) { T.say('Resources: ' + e.message, true); }
    };
    const read = async (uri, into) => {
      T.clear(into, el('p', {class: 'muted'}, `Reading ${uri}…`));
      try {
        const run = await T.post(T.srvPath(s.sum.id, '/read'), {uri});
        if (run.error) { T.clear(into, el('div', {class: 'error', role: 'alert'}, run.errorCode ? `Error ${run.errorCode} (${T.codeName(run.errorCode)}): ` : '', run.error)); return; }
        T.clear(into, el('div', {class: 'meta'}, `Read at ${T.fmtTime(Date.now())} in ${T.fmtMs(run.ms)}`),
          ((run.view && run.view.contents) || []).map((c) => el('div', {class: 'block resource'}, el('div', {class: 'meta'}, `${c.uri}${c.mimeType ? ' · ' + c.mimeType : ''}`), T.contents(c, run))),
          run.cut ? T.download(run) : null);
      } catch (e) { T.clear(into, el('div', {class: 'error'}, e.message)); }
    };
    const open = (uri, r) => {
      st.uri = uri;
      draw();
      const content = el('div', {class: 'contents', 'aria-live': 'polite'});
      const updates = el('ol', {class: 'updates', 'aria-label': 'Updates'});
      const subbed = () => s.sum.subscriptions.includes(uri);
      const sub = el('button', {type: 'button', class: 'subscribe', disabled: !(s.sum.info && s.sum.info.capabilities.resources && s.sum.info.capabilities.resources.subscribe) || !s.sum.features.tasks},
        subbed() ? 'Unsubscribe' : 'Subscribe');
      sub.onclick = async () => {
        // The answer is the server's summary: the button follows it at
        // once, not only when the stream's copy comes.
        try { const sum = await T.post(T.srvPath(s.sum.id, '/subscribe'), {uri, off: subbed()}); if (sum && sum.id === s.sum.id) s.sum = sum; sub.textContent = subbed() ? 'Unsubscribe' : 'Subscribe'; T.say(subbed() ? `Subscribed to ${uri}.` : `Unsubscribed from ${uri}.`); } catch (e) { T.say('Subscribe: ' + e.message, true); }
      };
      st.onUpdate = (m) => {
        if (m.uri !== uri) return;
        updates.prepend(el('li', {}, `Updated at ${T.fmtTime(m.time)}`));
        read(uri, content);
      };
      T.clear(detail, el('h3', {}, r && (r.title || r.name) ? r.title || r.name : uri), el('p', {class: 'sub'}, uri),
        r && r.description ? el('p', {class: 'desc'}, r.description) : null,
        el('div', {class: 'buttons'}, el('button', {type: 'button', class: 'read', onclick: () => read(uri, content)}, 'Read'), sub,
          el('button', {type: 'button', onclick: () => T.copy(T.command(s, ['read', uri]), 'the tako command')}, 'Copy as tako command')),
        updates, content);
      read(uri, content);
    };
    T.openResource = (srv, uri) => { T.show(srv, 'resources'); const t = srv.tabs.resources; if (t && t.open) t.open(uri); };
    const template = (t) => {
      const vars = [...t.uriTemplate.matchAll(/\{[+#./;?&]?([^}]+)\}/g)].flatMap((m) => m[1].split(',').map((v) => v.replace(/[*]|:\d+$/g, '')));
      const inputs = vars.map((v) => {
        const id = T.uid('tv');
        const dl = el('datalist', {id: id + '-dl'});
        const inp = el('input', {id, list: dl.id, 'data-var': v});
        inp.addEventListener('input', T.debounce(async () => {
          try {
            const ctx = {}; inputs.forEach((x) => { if (x.inp !== inp && x.inp.value) ctx[x.v] = x.inp.value; });
            const r = await T.post(T.srvPath(s.sum.id, '/complete'), {ref: {type: 'ref/resource', uri: t.uriTemplate}, argument: {name: v, value: inp.value}, context: {arguments: ctx}});
            T.clear(dl, ((r.completion && r.completion.values) || []).map((x) => el('option', {value: x})));
          } catch (e) { /* the server completes nothing */ }
        }, 200));
        return {v, inp, el: el('div', {class: 'field'}, el('label', {for: id}, v), inp, dl)};
      });
      const content = el('div', {class: 'contents'});
      T.clear(detail, el('h3', {}, t.title || t.name), el('p', {class: 'sub'}, t.uriTemplate), t.description ? el('p', {class: 'desc'}, t.description) : null,
        el('form', {onsubmit: (e) => {
          e.preventDefault();
          let uri = t.uriTemplate;
          inputs.forEach((x) => { uri = uri.replace(new RegExp(`\\{[+#./;?&]?${x.v}[^}]*\\}`), encodeURIComponent(x.inp.value)); });
          read(uri, content);
        }}, inputs.map((x) => x.el), el('div', {class: 'buttons'}, el('button', {type: 'submit', class: 'primary'}, 'Read'))), content);
    };
    s.onUpdate = (m) => { if (st.onUpdate) st.onUpdate(m); };
    s.reloadResources = () => { st.res = null; if (s.current === 'resources') load(true); };
    return {shown: () => load(false), open: (uri) => load(false).then(() => open(uri, (st.res || []).find((r) => r.uri === uri))), reset: () => { st.res = null; }};
  });

  // Prompts.
  T.tab('prompts', 'Prompts', (s, box) => {
    const st = {list: null};
    const list = el('ul', {class: 'list', 'aria-label': 'Prompts'});
    const detail = el('div', {class: 'detail'});
    box.append(el('div', {class: 'split'}, el('div', {class: 'side'}, el('div', {class: 'bar'}, el('button', {type: 'button', onclick: () => load(true)}, 'Refresh')), list), detail));
    const load = async (force) => {
      if (!T.connected(s)) { T.clear(detail, T.notConnected(s)); return; }
      if (st.list && !force) return;
      try {
        st.list = (await T.get(T.srvPath(s.sum.id, '/prompts'))).prompts;
        T.clear(list, st.list.map((p) => el('li', {}, el('button', {type: 'button', class: 'item', 'data-prompt': p.name, onclick: () => choose(p)},
          el('span', {class: 'name'}, p.title || p.name), p.description ? el('span', {class: 'desc'}, p.description) : null))));
      } catch (e) { T.say('Prompts: ' + e.message, true); }
    };
    const choose = (p) => {
      const args = (p.arguments || []).map((a) => {
        const id = T.uid('pa');
        const dl = el('datalist', {id: id + '-dl'});
        const inp = el('input', {id, list: dl.id, 'aria-required': a.required ? 'true' : undefined, 'data-arg': a.name});
        const x = {a, inp};
        inp.addEventListener('input', T.debounce(async () => {
          try {
            const ctx = {}; args.forEach((o) => { if (o !== x && o.inp.value) ctx[o.a.name] = o.inp.value; });
            const r = await T.post(T.srvPath(s.sum.id, '/complete'), {ref: {type: 'ref/prompt', name: p.name}, argument: {name: a.name, value: inp.value}, context: {arguments: ctx}});
            T.clear(dl, ((r.completion && r.completion.values) || []).map((v) => el('option', {value: v})));
          } catch (e) { /* no completion */ }
        }, 200));
        x.el = el('div', {class: 'field'}, el('label', {for: id}, a.title || a.name, a.required ? el('span', {class: 'reqmark'}, ' *') : null), inp, dl,
          a.description ? el('div', {class: 'help'}, a.description) : null);
        return x;
      });
      const out = el('div', {class: 'out'});
      const values = () => { const v = {}; args.forEach((x) => { if (x.inp.value !== '') v[x.a.name] = x.inp.value; }); return v; };
      T.clear(detail, el('h3', {}, p.title || p.name), p.description ? el('p', {class: 'desc'}, p.description) : null,
        el('form', {onsubmit: async (e) => {
          e.preventDefault();
          const missing = args.filter((x) => x.a.required && !x.inp.value).map((x) => x.a.name);
          if (missing.length) { T.say(`Required: ${missing.join(', ')}`, true); return; }
          T.clear(out, el('p', {class: 'muted'}, 'Getting the prompt…'));
          try {
            const run = await T.post(T.srvPath(s.sum.id, '/prompt'), {name: p.name, arguments: values()});
            if (run.error) { T.clear(out, el('div', {class: 'error', role: 'alert'}, run.error)); return; }
            T.clear(out, run.view.description ? el('p', {class: 'desc'}, run.view.description) : null, T.messages(run.view.messages, run, s));
          } catch (err) { T.clear(out, el('div', {class: 'error'}, err.message)); }
        }}, args.map((x) => x.el), el('div', {class: 'buttons'},
          el('button', {type: 'button', onclick: () => T.copy(T.command(s, ['prompt', p.name, ...Object.entries(values()).map(([k, v]) => `${k}=${v}`)]), 'the tako command')}, 'Copy as tako command'),
          el('button', {type: 'submit', class: 'primary'}, 'Get'))), out);
    };
    return {shown: () => load(false), reset: () => { st.list = null; }};
  });

  // The server's requests to the person, and the roots.
  T.tab('client', 'Requests', (s, box) => {
    const reqs = el('div', {class: 'requests', 'aria-live': 'polite'});
    const roots = el('div', {class: 'roots'});
    box.append(el('h3', {}, 'Requests from the server'), reqs, el('h3', {}, 'Roots'), roots);
    const answer = (r, body) => T.post(T.srvPath(s.sum.id, `/requests/${encodeURIComponent(r.id)}`), body).then(() => T.say('Answered.')).catch(T.fail('Answer'));
    const draw = () => {
      const pend = s.sum.pending || [];
      T.clear(reqs, pend.length ? pend.map((r) => ({elicitation, sampling, paused}[r.kind] || sampling)(r)) : el('p', {class: 'muted'}, 'None waits.'));
      drawRoots();
    };
    const elicitation = (r) => {
      const p = r.params;
      if (p.mode === 'url') {
        return el('article', {class: 'req', 'data-req': r.id}, el('h4', {}, 'The server asks you to open a page'), el('p', {}, p.message),
          el('p', {}, el('code', {}, p.url)),
          el('div', {class: 'buttons'}, el('a', {href: p.url, target: '_blank', rel: 'noopener noreferrer', class: 'button'}, 'Open it'),
            el('button', {type: 'button', onclick: () => answer(r, {action: 'accept'})}, 'Done'),
            el('button', {type: 'button', onclick: () => answer(r, {action: 'decline'})}, 'Decline')));
      }
      const form = T.schemaForm(p.requestedSchema || {type: 'object', properties: {}});
      return el('article', {class: 'req', 'data-req': r.id}, el('h4', {}, 'The server asks you'), el('p', {class: 'ask'}, p.message),
        el('form', {class: 'elicit', onsubmit: (e) => {
          e.preventDefault();
          const errs = form.errors();
          if (errs.length) { T.say(errs.join('; '), true); return; }
          answer(r, {action: 'accept', content: form.value() || {}});
        }}, form.el, el('div', {class: 'buttons'},
          el('button', {type: 'button', class: 'decline', onclick: () => answer(r, {action: 'decline'})}, 'Decline'),
          el('button', {type: 'button', onclick: () => answer(r, {action: 'cancel'})}, 'Cancel'),
          el('button', {type: 'submit', class: 'primary accept'}, 'Accept'))));
    };
    // A round held at input_required (the History page's pause): what
    // the server asks for, before the client answers it.
    const paused = (r) => {
      const p = r.params;
      const asks = (p.result && p.result.inputRequests) || {};
      return el('article', {class: 'req paused', 'data-req': r.id}, el('h4', {}, `Paused at input_required: ${p.method} #${p.id}`),
        el('p', {}, `The server needs ${Object.keys(asks).length} answer(s) before it goes on. Go on, and each is answered as usual: forms and sampling here, roots from the list below (edit it first if you like).`),
        el('ul', {class: 'asks'}, Object.entries(asks).map(([k, a]) => el('li', {'data-ask': k}, el('code', {}, k), ': ', el('strong', {}, a.method || '?'), a.params ? [' ', T.jsonView(a.params, false)] : null))),
        el('details', {}, el('summary', {}, 'The whole result'), T.jsonView(p.result, true)),
        el('div', {class: 'buttons'},
          el('button', {type: 'button', class: 'stop', onclick: () => answer(r, {action: 'stop'})}, 'Stop the call'),
          el('button', {type: 'button', class: 'primary continue', onclick: () => answer(r, {action: 'continue'})}, 'Go on')));
    };
    const sampling = (r) => {
      const p = r.params;
      const id = T.uid('sa');
      const text = el('textarea', {id, rows: 4, class: 'answer'});
      const model = el('input', {id: id + '-m', value: 'a person'});
      return el('article', {class: 'req', 'data-req': r.id}, el('h4', {}, 'The server asks for a completion (sampling)'),
        p.systemPrompt ? el('p', {}, 'System prompt: ', el('em', {}, p.systemPrompt)) : null,
        T.messages(p.messages, null, s), el('p', {class: 'muted'}, `At most ${p.maxTokens} tokens.${p.tools ? ` Offers ${p.tools.length} tools.` : ''}`),
        el('form', {onsubmit: (e) => { e.preventDefault(); answer(r, {action: 'approve', text: text.value, model: model.value}); }},
          el('div', {class: 'field'}, el('label', {for: id}, 'Your answer'), text),
          el('div', {class: 'field'}, el('label', {for: model.id}, 'Model name sent'), model),
          el('div', {class: 'buttons'}, el('button', {type: 'button', class: 'decline', onclick: () => answer(r, {action: 'decline'})}, 'Decline'),
            el('button', {type: 'submit', class: 'primary send'}, 'Send the answer'))));
    };
    // The roots being edited are not redrawn under the person's hands
    // when a request comes (a call paused at input_required waits while
    // they edit them); saved, they are the server's again.
    let editing = false;
    const drawRoots = () => {
      if (editing) return;
      const rows = (s.sum.roots || []).map((r) => ({uri: r.uri, name: r.name || ''}));
      const list = el('ol', {class: 'rootlist'});
      const add = (r) => {
        const u = el('input', {value: r.uri, 'aria-label': 'Root URI', placeholder: 'file:///path', class: 'wide'});
        const n = el('input', {value: r.name, 'aria-label': 'Root name', placeholder: 'name'});
        const li = el('li', {oninput: () => { editing = true; }}, u, n, el('button', {type: 'button', class: 'small', onclick: () => { editing = true; li.remove(); }}, 'Remove'));
        li.get = () => ({uri: u.value.trim(), name: n.value.trim() || undefined});
        list.append(li);
      };
      rows.forEach(add);
      T.clear(roots, el('p', {class: 'muted'}, 'The directories this client offers the server (roots/list).'), list,
        el('div', {class: 'buttons'}, el('button', {type: 'button', class: 'addroot', onclick: () => { editing = true; add({uri: 'file://', name: ''}); }}, 'Add a root'),
          el('button', {type: 'button', class: 'primary saveroots', onclick: () => {
            const v = [...list.children].map((li) => li.get()).filter((r) => r.uri);
            T.api('PUT', T.srvPath(s.sum.id, '/roots'), v).then((sum) => { editing = false; if (sum && sum.id === s.sum.id) s.sum = sum; T.say('Roots saved.'); }).catch(T.fail('Roots'));
          }}, 'Save the roots')));
    };
    s.drawRequests = draw;
    return {shown: draw};
  });
  T.tabs.find((t) => t.name === 'client').badge = (s) => (s.sum.pending || []).length;
  const syncRequests = (s) => { if (s.current === 'client' && s.drawRequests) s.drawRequests(); T.badges(s); };
  T.onServer('request', (s, r) => {
    if (!s.sum.pending.some((x) => x.id === r.id)) s.sum.pending.push(r);
    T.say(`${s.sum.name} asks you something: see its Requests page.`);
    if (s.panel && s.current !== 'client') T.show(s, 'client'); else syncRequests(s);
  });
  T.onServer('request-done', (s, m) => { s.sum.pending = s.sum.pending.filter((x) => x.id !== m.id); syncRequests(s); });
  T.onServer('updated', (s, m) => { if (s.onUpdate) s.onUpdate(m); });
  T.onServer('notification', (s, n) => {
    if (n.method === 'notifications/resources/list_changed' && s.reloadResources) s.reloadResources();
    s.notes.push(n);
    if (s.notes.length > 2000) s.notes.splice(0, s.notes.length - 2000);
    if (s.noteAdded) s.noteAdded(n);
  });
  T.onServer('task', (s, m) => { (s.tasks = s.tasks || new Map()).set(m.task.taskId, m.task); if (s.drawTasks && s.current === 'tasks') s.drawTasks(); });

  // Tasks.
  T.tab('tasks', 'Tasks', (s, box) => {
    const list = el('div', {class: 'tasks'});
    const note = el('p', {class: 'muted'});
    box.append(el('div', {class: 'bar'}, el('button', {type: 'button', onclick: () => load()}, 'Refresh')), note, list);
    const known = s.tasks = s.tasks || new Map();
    const draw = () => T.clear(list, known.size ? el('table', {class: 'grid'}, el('thead', {}, el('tr', {}, ['Task', 'Status', 'Updated', ''].map((h) => el('th', {scope: 'col'}, h)))),
      el('tbody', {}, [...known.values()].map((t) => el('tr', {'data-task': t.taskId}, el('td', {}, el('code', {}, t.taskId)), el('td', {class: `status ${t.status}`}, t.status, t.statusMessage ? ` — ${t.statusMessage}` : ''),
        el('td', {}, t.lastUpdatedAt || t.createdAt || ''),
        el('td', {}, el('button', {type: 'button', class: 'small tstatus', onclick: () => op(t, 'get')}, 'Status'),
          el('button', {type: 'button', class: 'small tresult', onclick: () => op(t, 'result')}, 'Result'),
          el('button', {type: 'button', class: 'small tcancel', onclick: () => op(t, 'cancel')}, 'Cancel')))))) : el('p', {class: 'muted'}, 'No tasks yet: run a tool "as a task".'));
    const out = el('div', {class: 'out'});
    box.append(out);
    const op = async (t, what) => {
      try {
        const r = await T.post(T.srvPath(s.sum.id, `/tasks/${encodeURIComponent(t.taskId)}/${what}`));
        if (what === 'get') { known.set(t.taskId, r); draw(); }
        if (what === 'result') T.clear(out, T.result(r, s));
        if (what === 'cancel') { T.say(`Asked to cancel ${t.taskId}.`); op(t, 'get'); }
      } catch (e) { T.say(`Task ${what}: ${e.message}`, true); }
    };
    const load = async () => {
      if (!T.connected(s)) { T.clear(list, T.notConnected(s)); return; }
      try {
        const r = await T.get(T.srvPath(s.sum.id, '/tasks'));
        note.textContent = r.note || '';
        r.tasks.forEach((t) => known.set(t.taskId, t));
        draw();
      } catch (e) { note.textContent = e.message; }
    };
    s.drawTasks = draw;
    return {shown: load};
  }, (s) => s.sum.features.tasks);

  // Notifications and logs.
  T.tab('logs', 'Logs', (s, box) => {
    const levels = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
    const id = T.uid('lv');
    const sel = el('select', {id, class: 'loglevel'}, el('option', {value: ''}, '(not asked)'), levels.map((l) => el('option', {value: l}, l)));
    sel.value = s.sum.logLevel || '';
    sel.addEventListener('change', () => sel.value && T.post(T.srvPath(s.sum.id, '/loglevel'), {level: sel.value}).then(() => T.say(`Log level ${sel.value}.`)).catch(T.fail('Log level')));
    const filter = el('input', {type: 'search', placeholder: 'Filter', 'aria-label': 'Filter notifications', class: 'search'});
    const list = el('ol', {class: 'notes', 'aria-label': 'Notifications'});
    box.append(el('div', {class: 'bar'}, s.sum.features.logLevel ? [el('label', {for: id}, 'Log level '), sel] : null, filter,
      el('button', {type: 'button', onclick: () => { s.notes.length = 0; draw(); }}, 'Clear')), list);
    const row = (n) => {
      const p = n.params || {};
      const isLog = n.method === 'notifications/message';
      return el('li', {class: `note ${isLog ? 'log ' + (p.level || '') : ''}`}, el('span', {class: 'time'}, T.fmtTime(n.time)), ' ',
        isLog ? [el('span', {class: 'level'}, p.level), p.logger ? el('span', {class: 'logger'}, ` ${p.logger}`) : null, ' ',
          el('span', {class: 'data'}, typeof p.data === 'string' ? p.data : JSON.stringify(p.data))] :
          [el('span', {class: 'method'}, n.method), ' ', n.params ? el('span', {class: 'data'}, JSON.stringify(n.params).slice(0, 300)) : null]);
    };
    const draw = () => {
      const f = filter.value.toLowerCase();
      T.clear(list, s.notes.filter((n) => !f || JSON.stringify(n).toLowerCase().includes(f)).slice(-500).map(row));
    };
    filter.addEventListener('input', T.debounce(draw, 150));
    s.noteAdded = (n) => {
      if (s.current === 'logs' && (!filter.value || JSON.stringify(n).toLowerCase().includes(filter.value.toLowerCase()))) {
        list.append(row(n));
        while (list.children.length > 500) list.firstChild.remove();
      }
    };
    return {shown: () => { sel.value = s.sum.logLevel || ''; draw(); }};
  });
})();
