package schemacheck

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// ErrRefCycle is wrapped by the error of a schema that refers to itself
// without end: {"$ref": "#"}, or $defs that refer to each other through
// $ref, allOf and the other keywords that apply a schema to the value in
// hand rather than to a part of it. The validator follows such a cycle
// until the process dies of a stack overflow, which no recover stops: a
// server's schema must not be able to do that to the client, so such a
// schema is refused when it is compiled. A cycle through properties,
// items and the like is a recursive schema, which ends with the value.
var ErrRefCycle = errors.New("the schema refers to itself without end")

// In-place keywords: each applies its schema to the same value as the
// schema it is in, so that a cycle through them alone never ends.
var (
	inPlaceSingle = []string{"not", "if", "then", "else"}
	inPlaceArray  = []string{"allOf", "anyOf", "oneOf"}
	inPlaceMap    = []string{"dependentSchemas", "dependencies"}
)

// schemaNode is one schema object of a document.
type schemaNode struct {
	obj  map[string]any
	base *url.URL // the base URI its references resolve against
}

// refGraph indexes a schema document for checkRefCycles: its schema
// objects by JSON pointer from the document's root, its resources by
// URI, its anchors.
type refGraph struct {
	draft07   bool
	nodes     map[string]*schemaNode
	boolean   map[string]bool   // paths of the schemas true and false
	resources map[string]string // URI, fragment dropped -> root path
	anchors   map[string]string // resource URI + "#" + name -> path
	dynamic   map[string][]string
}

// checkRefCycles returns an error wrapping ErrRefCycle when doc, a decoded
// schema, has a cycle of in-place applications, and an error for a $ref
// it cannot follow within doc (the validator, which follows no external
// reference, has refused those already).
func checkRefCycles(doc any, draft07 bool) error {
	root, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	g := &refGraph{draft07: draft07, nodes: map[string]*schemaNode{}, boolean: map[string]bool{}, resources: map[string]string{}, anchors: map[string]string{}, dynamic: map[string][]string{}}
	g.index(root, "", &url.URL{})
	edges := map[string][]string{}
	for path, n := range g.nodes {
		out, err := g.inPlace(path, n)
		if err != nil {
			return err
		}
		edges[path] = out
	}
	// Depth-first, without recursion: a schema may nest deeply.
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	type frame struct {
		path string
		next int
	}
	for start := range g.nodes {
		if state[start] != unseen {
			continue
		}
		stack := []frame{{start, 0}}
		state[start] = open
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(edges[top.path]) {
				state[top.path] = done
				stack = stack[:len(stack)-1]
				continue
			}
			to := edges[top.path][top.next]
			top.next++
			switch state[to] {
			case open:
				return fmt.Errorf("%w: %s applies %s to the same value, which leads back to it", ErrRefCycle, pointerText(top.path), pointerText(to))
			case unseen:
				state[to] = open
				stack = append(stack, frame{to, 0})
			}
		}
	}
	return nil
}

func pointerText(path string) string {
	return "#" + path
}

// index records s, at path, and the schemas under it.
func (g *refGraph) index(s map[string]any, path string, base *url.URL) {
	ignoreID := g.draft07 && s["$ref"] != nil // draft-07: $ref's siblings do not count
	if id, ok := s["$id"].(string); ok && !ignoreID {
		if u, err := url.Parse(id); err == nil {
			if g.draft07 && strings.HasPrefix(id, "#") {
				g.anchors[resourceKey(base)+id] = path // a draft-07 plain-name $id is an anchor
			} else {
				base = base.ResolveReference(u)
				base.Fragment, base.RawFragment = "", ""
				g.resources[resourceKey(base)] = path
			}
		}
	}
	if path == "" {
		g.resources[resourceKey(base)] = ""
	}
	if a, ok := s["$anchor"].(string); ok {
		g.anchors[resourceKey(base)+"#"+a] = path
	}
	if a, ok := s["$dynamicAnchor"].(string); ok {
		g.anchors[resourceKey(base)+"#"+a] = path
		g.dynamic[a] = append(g.dynamic[a], path)
	}
	g.nodes[path] = &schemaNode{obj: s, base: base}
	eachSubschema(s, func(v any, pointer string) {
		switch v := v.(type) {
		case map[string]any:
			g.index(v, path+pointer, base)
		case bool:
			g.boolean[path+pointer] = true
		}
	})
}

// inPlace lists the schemas n applies to the value it is given.
func (g *refGraph) inPlace(path string, n *schemaNode) ([]string, error) {
	var out []string
	add := func(v any, p string) {
		if _, ok := v.(map[string]any); ok {
			out = append(out, p)
		}
	}
	follow := func(ref string) error {
		to, isObject, err := g.resolve(n, ref)
		if isObject {
			out = append(out, to)
		}
		return err
	}
	if ref, ok := n.obj["$ref"].(string); ok {
		if err := follow(ref); err != nil {
			return nil, err
		}
		if g.draft07 {
			return out, nil // draft-07: $ref's siblings do not count
		}
	}
	if ref, ok := n.obj["$dynamicRef"].(string); ok {
		if err := follow(ref); err != nil {
			return nil, err
		}
		// Where a dynamic anchor of the name is in scope, the reference
		// may go to any of them.
		if _, name, ok := strings.Cut(ref, "#"); ok {
			out = append(out, g.dynamic[name]...)
		}
	}
	for _, k := range inPlaceSingle {
		add(n.obj[k], path+"/"+k)
	}
	for _, k := range inPlaceArray {
		if a, ok := n.obj[k].([]any); ok {
			for i, v := range a {
				add(v, path+"/"+k+"/"+strconv.Itoa(i))
			}
		}
	}
	for _, k := range inPlaceMap {
		if m, ok := n.obj[k].(map[string]any); ok {
			for name, v := range m {
				add(v, path+"/"+k+"/"+escapePointer(name))
			}
		}
	}
	return out, nil
}

// resolve finds the schema ref names, from n: its path, and whether it is
// an object (the schemas true and false apply nothing further).
func (g *refGraph) resolve(n *schemaNode, ref string) (path string, isObject bool, err error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", false, fmt.Errorf("$ref %q: %v", ref, err)
	}
	target := n.base.ResolveReference(u)
	frag := target.Fragment
	target.Fragment, target.RawFragment = "", ""
	root, ok := g.resources[resourceKey(target)]
	if !ok {
		return "", false, fmt.Errorf("$ref %q: no schema of this document has that URI", ref)
	}
	switch {
	case frag == "":
		path = root
	case strings.HasPrefix(frag, "/"):
		path = root + frag
	default:
		if path, ok = g.anchors[resourceKey(target)+"#"+frag]; !ok {
			return "", false, fmt.Errorf("$ref %q: no anchor %q", ref, frag)
		}
	}
	if g.boolean[path] {
		return path, false, nil
	}
	if _, ok := g.nodes[path]; !ok {
		return "", false, fmt.Errorf("$ref %q: no schema at %s", ref, pointerText(path))
	}
	return path, true, nil
}

func resourceKey(u *url.URL) string {
	return u.String()
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
