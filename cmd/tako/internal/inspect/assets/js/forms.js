// Forms made from JSON Schemas: a tool's input schema, an elicitation's
// requested schema. Objects become fieldsets, arrays lists with add and
// remove, enums selects, booleans checkboxes, numbers number inputs;
// defaults fill the fields, required ones are marked; anything the form
// cannot model (oneOf of objects, a $ref) is a JSON field. Every control
// has a label. T.schemaForm returns {el, value(), set(v), errors()}.
'use strict';

(() => {
  const {el} = T;

  // typeOf is a schema's one type: the first of a list that is not null.
  const typeOf = (s) => {
    if (!s || typeof s !== 'object') return 'any';
    let t = s.type;
    if (Array.isArray(t)) t = t.find((x) => x !== 'null') || t[0];
    if (!t) {
      if (s.properties) return 'object';
      if (s.items) return 'array';
      if (s.enum) return 'enum';
      const alt = s.oneOf || s.anyOf;
      if (alt && alt.every((a) => a && 'const' in a)) return 'enum';
      return 'any';
    }
    if (s.enum || (t === 'string' && (s.oneOf || s.anyOf) && (s.oneOf || s.anyOf).every((a) => a && 'const' in a))) return 'enum';
    return t;
  };
  const choices = (s) => s.enum ? s.enum.map((v) => ({v, label: String(v)})) :
    (s.oneOf || s.anyOf).map((a) => ({v: a.const, label: a.title || String(a.const)}));
  // For enum arrays (multi-select).
  const itemChoices = (s) => s && (s.enum || s.anyOf || s.oneOf) ? choices(s) : null;

  // field builds the control of one schema at path; it returns
  // {el, value(), set(v)}; value() is undefined for an empty optional.
  const field = (schema, name, required, path) => {
    const s = schema || {};
    const id = T.uid('f');
    const title = s.title || name || 'value';
    const label = (forId) => el('label', {for: forId}, title, required ? el('span', {class: 'reqmark', title: 'required'}, ' *') : null,
      s.type ? el('span', {class: 'ftype'}, ` ${Array.isArray(s.type) ? s.type.join('|') : s.type}`) : null);
    const help = s.description ? el('div', {class: 'help', id: id + '-help'}, s.description) : null;
    const described = help ? id + '-help' : undefined;
    const t = typeOf(s);
    const def = s.default;

    if (t === 'object' && s.properties) {
      const req = new Set(s.required || []);
      const kids = Object.entries(s.properties).map(([k, ps]) => [k, field(ps, k, req.has(k), path.concat(k))]);
      const box = el('fieldset', {class: 'fobj', 'data-path': path.join('.')}, name !== undefined ? el('legend', {}, title, required ? el('span', {class: 'reqmark'}, ' *') : null) : null, help, kids.map(([, f]) => f.el));
      return {el: box,
        value: () => {
          const v = {};
          for (const [k, f] of kids) { const x = f.value(); if (x !== undefined) v[k] = x; }
          return (!required && name !== undefined && Object.keys(v).length === 0) ? undefined : v;
        },
        set: (v) => { for (const [k, f] of kids) f.set(v && typeof v === 'object' ? v[k] : undefined); }};
    }
    if (t === 'array' && itemChoices(s.items)) {
      const opts = itemChoices(s.items);
      const boxes = opts.map((o) => { const cid = T.uid('c'); return [o, el('input', {type: 'checkbox', id: cid}), cid]; });
      const box = el('fieldset', {class: 'fmulti', 'data-path': path.join('.')}, el('legend', {}, title, required ? el('span', {class: 'reqmark'}, ' *') : null), help,
        boxes.map(([o, b, cid]) => el('span', {class: 'opt'}, b, el('label', {for: cid}, o.label))));
      const set = (v) => boxes.forEach(([o, b]) => { b.checked = Array.isArray(v) && v.includes(o.v); });
      set(def);
      return {el: box, value: () => { const v = boxes.filter(([, b]) => b.checked).map(([o]) => o.v); return v.length || required ? v : undefined; }, set};
    }
    if (t === 'array') {
      const items = [];
      const list = el('ol', {class: 'farr'});
      const box = el('fieldset', {class: 'farray', 'data-path': path.join('.')}, el('legend', {}, title, required ? el('span', {class: 'reqmark'}, ' *') : null), help, list);
      const add = (v) => {
        const f = field(s.items || {}, `${title} item ${items.length + 1}`, true, path.concat(items.length));
        const li = el('li', {}, f.el);
        const it = {f, li};
        li.append(el('button', {type: 'button', class: 'small', 'aria-label': `Remove ${title} item`, onclick: () => { items.splice(items.indexOf(it), 1); li.remove(); }}, 'Remove'));
        items.push(it);
        list.append(li);
        if (v !== undefined) f.set(v);
      };
      box.append(el('button', {type: 'button', class: 'small', onclick: () => add()}, `Add ${s.items && s.items.title ? s.items.title : 'an item'}`));
      const set = (v) => { items.splice(0).forEach((it) => it.li.remove()); if (Array.isArray(v)) v.forEach((x) => add(x)); };
      set(def);
      return {el: box, value: () => { const v = items.map((it) => it.f.value()).filter((x) => x !== undefined); return v.length || required ? v : undefined; }, set};
    }
    if (t === 'enum') {
      const opts = choices(s);
      const sel = el('select', {id, 'aria-describedby': described, 'aria-required': required ? 'true' : undefined, 'data-path': path.join('.')},
        required && def !== undefined ? null : el('option', {value: ''}, required ? '(choose one)' : '(none)'),
        opts.map((o, i) => el('option', {value: String(i)}, o.label)));
      const set = (v) => { const i = opts.findIndex((o) => o.v === v); sel.value = i < 0 ? '' : String(i); };
      set(def);
      return {el: el('div', {class: 'field'}, label(id), sel, help), value: () => sel.value === '' ? undefined : opts[Number(sel.value)].v, set};
    }
    if (t === 'boolean') {
      const cb = el('input', {type: 'checkbox', id, 'aria-describedby': described, 'data-path': path.join('.')});
      // An optional boolean left alone is left out; once touched, sent.
      let touched = required || def !== undefined;
      cb.addEventListener('change', () => { touched = true; });
      const set = (v) => { cb.checked = v === true; if (v !== undefined) touched = true; };
      set(def);
      return {el: el('div', {class: 'field check'}, cb, label(id), help), value: () => touched ? cb.checked : undefined, set};
    }
    if (t === 'number' || t === 'integer') {
      const inp = el('input', {type: 'number', id, step: t === 'integer' ? '1' : 'any', min: s.minimum, max: s.maximum,
        'aria-describedby': described, 'aria-required': required ? 'true' : undefined, 'data-path': path.join('.')});
      const set = (v) => { inp.value = v === undefined || v === null ? '' : String(v); };
      set(def);
      return {el: el('div', {class: 'field'}, label(id), inp, help), value: () => inp.value === '' ? undefined : Number(inp.value), set,
        check: () => inp.value !== '' && isNaN(Number(inp.value)) ? `${title} is not a number` : null};
    }
    if (t === 'string') {
      const long = (s.maxLength || 0) > 200 || /multi|markdown|text$/i.test(s.format || '');
      const type = {email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local'}[s.format] || 'text';
      const inp = long ? el('textarea', {id, rows: 3}) : el('input', {type, id, minlength: s.minLength, maxlength: s.maxLength, pattern: s.pattern});
      inp.setAttribute('data-path', path.join('.'));
      if (described) inp.setAttribute('aria-describedby', described);
      if (required) inp.setAttribute('aria-required', 'true');
      let touched = def !== undefined;
      inp.addEventListener('input', () => { touched = true; });
      const set = (v) => { inp.value = v === undefined || v === null ? '' : String(v); if (v !== undefined) touched = true; };
      set(def);
      return {el: el('div', {class: 'field'}, label(id), inp, help), value: () => inp.value === '' && !required && !touched ? undefined : inp.value, set};
    }
    // Anything else: JSON.
    const ta = el('textarea', {id, rows: 3, class: 'jsonin', 'aria-describedby': described, 'data-path': path.join('.'), placeholder: 'JSON'});
    const set = (v) => { ta.value = v === undefined ? '' : JSON.stringify(v, null, 2); };
    set(def);
    return {el: el('div', {class: 'field'}, label(id), ta, help),
      value: () => { if (ta.value.trim() === '') return undefined; try { return JSON.parse(ta.value); } catch (e) { return undefined; } },
      set, check: () => { if (ta.value.trim() === '') return null; try { JSON.parse(ta.value); return null; } catch (e) { return `${title}: ${e.message}`; } }};
  };

  // checks collects the errors of every field that can have one.
  const walkChecks = (root) => [...root.querySelectorAll('[data-path]')];

  T.schemaForm = (schema) => {
    const s = schema && typeof schema === 'object' ? schema : {type: 'object'};
    const top = (typeOf(s) === 'object' && !s.properties) ? field({type: 'object', properties: {}}, undefined, true, []) : field(s, undefined, true, []);
    return {el: top.el, value: top.value, set: top.set,
      errors: () => {
        const out = [];
        for (const e of walkChecks(top.el)) {
          if (e.validity && !e.validity.valid) out.push(`${e.id ? (document.querySelector(`label[for="${e.id}"]`) || {}).textContent || e.id : 'a field'}: ${e.validationMessage}`);
          if (e.classList.contains('jsonin') && e.value.trim()) { try { JSON.parse(e.value); } catch (x) { out.push(`a JSON field: ${x.message}`); } }
          if (e.getAttribute('aria-required') === 'true' && e.value === '' && e.tagName !== 'SELECT') out.push(`${(document.querySelector(`label[for="${e.id}"]`) || {}).textContent || 'a field'} is required`);
          if (e.tagName === 'SELECT' && e.getAttribute('aria-required') === 'true' && e.value === '') out.push(`choose a value for ${(document.querySelector(`label[for="${e.id}"]`) || {}).textContent || 'a field'}`);
        }
        return out;
      }};
  };
})();
