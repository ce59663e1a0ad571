package main

import "strings"

// addHeader parses one --header 'K: V' (repeatable) for --http.
func addHeader(o *options, v string) error {
	k, val, ok := strings.Cut(v, ":")
	k = strings.TrimSpace(k)
	if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") {
		return usagef("--header wants 'NAME: VALUE', not %q", v)
	}
	if strings.ContainsAny(val, "\r\n") {
		return usagef("--header %s: a header value cannot hold a line break", k)
	}
	o.headers = append(o.headers, k+":"+strings.TrimSpace(val))
	return nil
}
