// The tools page: a searchable list (paged, so 2,000 tools cost what 50
// do), and for the tool chosen a form made from its input schema or raw
// JSON, Run and Cancel, a progress bar, the result by content kind, and
// "copy as a tako command". A tool whose _meta names a ui:// resource
// opens its MCP App beside the result (apps.js).
'use strict';

(() => {
  const {el} = T;
  const pageSize = 50;

  // shq quotes a word for a POSIX shell.
  T.shq = (s) => /^[A-Za-z0-9_./:=@%+,-]+$/.test(s) ? s : `'${String(s).replace(/'/g, `'\\''`)}'`;
  T.command = (s, words) => ['tako', ...words.map(T.shq), ...(s.sum.flags || []).map(T.shq)].join(' ');

  T.appURI = (tool) => {
    const m = tool && tool._meta;
    if (!m) return null;
    const u = (m.ui && m.ui.resourceUri) || m['ui/resourceUri'];
    return typeof u === 'string' && u.startsWith('ui://') ? u : null;
  };

  T.onServer('run', (s, r) => { s.runs.set(r.id, r); if (s.runs.onTool) s.runs.onTool(r); });
  T.onServer('progress', (s, m) => {
    const r = s.runs.get(m.run);
    if (r) { r.progress = m.progress; if (s.runs.onTool) s.runs.onTool(r); }
  });
  T.onServer('notification', (s, n) => { if (n.method === 'notifications/tools/list_changed') { s.tools = null; if (s.reloadTools) s.reloadTools(); } });

  T.tab('tools', 'Tools', (s, box) => {
    const st = {page: 0, filter: '', chosen: null};
    const search = el('input', {type: 'search', id: T.uid('ts'), placeholder: 'Search tools', 'aria-label': 'Search tools', class: 'search'});
    const count = el('span', {class: 'muted count', 'aria-live': 'polite'});
    const list = el('ul', {class: 'list tools', 'aria-label': 'Tools'});
    const pager = el('div', {class: 'pager'});
    const detail = el('div', {class: 'detail', 'aria-live': 'off'});
    const refresh = el('button', {type: 'button', onclick: () => load(true)}, 'Refresh');
    box.append(el('div', {class: 'split'}, el('div', {class: 'side'}, el('div', {class: 'bar'}, search, refresh), count, list, pager), detail));

    const matching = () => {
      const f = st.filter.toLowerCase();
      return (s.tools || []).filter((t) => !f || t.name.toLowerCase().includes(f) || (t.title || '').toLowerCase().includes(f) || (t.description || '').toLowerCase().includes(f));
    };
    const draw = () => {
      const all = matching();
      const pages = Math.max(1, Math.ceil(all.length / pageSize));
      st.page = Math.min(st.page, pages - 1);
      const shown = all.slice(st.page * pageSize, (st.page + 1) * pageSize);
      count.textContent = s.tools ? `${all.length} of ${s.tools.length} tools` : '';
      // A redraw (a relisting, a list change) must not take the focus from
      // a person moving through the list with the keyboard.
      const focused = list.contains(document.activeElement) ? document.activeElement.dataset.tool : null;
      T.clear(list, shown.map((t) => el('li', {},
        el('button', {type: 'button', class: `item${st.chosen && st.chosen.name === t.name ? ' on' : ''}`, 'data-tool': t.name, onclick: () => choose(t)},
          el('span', {class: 'name'}, t.title || t.name), t.title ? el('span', {class: 'sub'}, t.name) : null,
          T.appURI(t) ? el('span', {class: 'tag'}, 'app') : null,
          t.description ? el('span', {class: 'desc'}, t.description.split('\n')[0]) : null))));
      if (focused) { const b = [...list.querySelectorAll('button[data-tool]')].find((x) => x.dataset.tool === focused); if (b) b.focus(); }
      T.clear(pager, pages > 1 ? [
        el('button', {type: 'button', disabled: st.page === 0, onclick: () => { st.page--; draw(); }}, 'Previous'),
        el('span', {}, ` page ${st.page + 1} of ${pages} `),
        el('button', {type: 'button', disabled: st.page >= pages - 1, onclick: () => { st.page++; draw(); }}, 'Next')] : []);
    };
    search.addEventListener('input', T.debounce(() => { st.filter = search.value; st.page = 0; draw(); }, 120));

    const load = async (force) => {
      if (!T.connected(s)) { T.clear(list); T.clear(detail, T.notConnected(s)); return; }
      if (s.tools && !force) { draw(); return; }
      count.textContent = 'Loading…';
      try {
        const r = await T.get(T.srvPath(s.sum.id, '/tools'));
        s.tools = r.tools;
        draw();
        // A relisted tool keeps its form and its result (a tool that
        // changes the list, as notify does, is relisted while its answer
        // shows), unless its schema changed.
        if (st.chosen) {
          const again = s.tools.find((t) => t.name === st.chosen.name);
          if (again && JSON.stringify(again.inputSchema) === JSON.stringify(st.chosen.inputSchema)) st.chosen = again;
          else if (again) choose(again);
        }
      } catch (e) { count.textContent = ''; T.say('Tools: ' + e.message, true); }
    };

    const choose = (tool) => {
      st.chosen = tool;
      draw();
      const form = T.schemaForm(tool.inputSchema);
      const raw = el('textarea', {class: 'jsonin', rows: 8, id: T.uid('raw'), 'aria-label': 'Arguments as JSON', hidden: true});
      const rawToggle = el('input', {type: 'checkbox', id: T.uid('rt')});
      const asTask = el('input', {type: 'checkbox', id: T.uid('task')});
      const run = el('button', {type: 'submit', class: 'primary run'}, 'Run');
      const cancel = el('button', {type: 'button', class: 'cancel', disabled: true}, 'Cancel');
      const prog = el('progress', {class: 'prog', hidden: true, 'aria-label': `Progress of ${tool.name}`});
      const progText = el('span', {class: 'progtext', 'aria-live': 'polite'});
      const out = el('div', {class: 'out'});
      const app = el('div', {class: 'app'});
      let current = null;
      const args = () => {
        if (rawToggle.checked) return JSON.parse(raw.value || '{}');
        return form.value() || {};
      };
      rawToggle.addEventListener('change', () => {
        if (rawToggle.checked) { raw.value = JSON.stringify(form.value() || {}, null, 2); raw.hidden = false; form.el.hidden = true; } else {
          try { form.set(JSON.parse(raw.value || '{}')); } catch (e) { T.say('The JSON does not parse: ' + e.message, true); rawToggle.checked = true; return; }
          raw.hidden = true; form.el.hidden = false;
        }
      });
      const show = (r) => {
        if (!current || r.id !== current) return;
        const running = r.state === 'running';
        run.disabled = running;
        cancel.disabled = !running;
        if (running) {
          prog.hidden = false;
          if (r.progress && r.progress.total) { prog.max = r.progress.total; prog.value = r.progress.progress; } else if (r.progress) { prog.removeAttribute('value'); }
          progText.textContent = r.progress ? `${r.progress.progress}${r.progress.total ? ' / ' + r.progress.total : ''}${r.progress.message ? ' — ' + r.progress.message : ''}` : 'running…';
          T.clear(out, el('p', {class: 'muted'}, `Running ${tool.name}…`));
          return;
        }
        prog.hidden = true;
        progText.textContent = '';
        T.clear(out, T.result(r, s));
        const uri = T.appURI(tool);
        if (uri && r.state === 'done' && T.openApp) T.openApp(s, tool, uri, r, app);
      };
      s.runs.onTool = show;
      const f = el('form', {class: 'toolform', onsubmit: async (e) => {
        e.preventDefault();
        let a;
        try { a = args(); } catch (err) { T.say('The arguments are not JSON: ' + err.message, true); return; }
        const errs = rawToggle.checked ? [] : form.errors();
        if (errs.length) { T.say(errs.join('; '), true); return; }
        run.disabled = true;
        try {
          const r = await T.post(T.srvPath(s.sum.id, '/call'), {name: tool.name, arguments: a, task: asTask.checked});
          current = r.id;
          // The run's events may have come first: the latest state wins.
          if (!s.runs.has(r.id)) s.runs.set(r.id, r);
          show(s.runs.get(r.id));
        } catch (err) { run.disabled = false; T.say(`${tool.name}: ${err.message}`, true); }
      }},
      el('div', {class: 'fbox'}, form.el, raw),
      el('div', {class: 'buttons'},
        el('span', {class: 'opt'}, rawToggle, el('label', {for: rawToggle.id}, 'Raw JSON')),
        s.sum.features.tasks ? el('span', {class: 'opt'}, asTask, el('label', {for: asTask.id}, 'As a task')) : null,
        el('button', {type: 'button', onclick: () => { let a; try { a = args(); } catch (e) { a = {}; } T.copy(T.command(s, ['call', tool.name, JSON.stringify(a)]), 'the tako command'); }}, 'Copy as tako command'),
        cancel, run),
      el('div', {class: 'progress'}, prog, progText));
      cancel.addEventListener('click', () => current && T.post(`/api/runs/${encodeURIComponent(current)}/cancel`).catch(T.fail('Cancel')));
      const ann = tool.annotations || {};
      const hints = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'].filter((h) => ann[h]).map((h) => el('span', {class: 'tag'}, h.replace('Hint', '')));
      T.clear(detail,
        el('h3', {}, tool.title || tool.name, tool.title ? el('span', {class: 'sub'}, ` ${tool.name}`) : null, hints),
        tool.description ? el('p', {class: 'desc'}, tool.description) : null,
        T.appURI(tool) ? el('p', {class: 'muted'}, `This tool has an MCP App (${T.appURI(tool)}): it opens with the result.`) : null,
        el('details', {}, el('summary', {}, 'Input schema'), T.jsonView(tool.inputSchema, true)),
        tool.outputSchema ? el('details', {}, el('summary', {}, 'Output schema'), T.jsonView(tool.outputSchema, true)) : null,
        f, out, app);
      const first = form.el.querySelector('input, select, textarea');
      if (first) first.focus();
    };

    s.reloadTools = () => { s.tools = null; if (s.current === 'tools') load(true); };
    return {shown: () => load(false), reset: () => { st.chosen = null; T.clear(detail); }};
  });
})();
