package transport

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// Caching of results (checklist §6B).
//
// A server may say, with ttlMs and cacheScope, how long a result of
// server/discover, tools/list, prompts/list, resources/list,
// resources/templates/list or resources/read stays fresh and who may reuse
// it. The Session keeps such results and answers a repeated request from
// them, sending nothing, while they are fresh (now < received + ttlMs). The
// rules:
//
//   - The key is the method and the params without _meta (each page of a
//     list is its own entry, as its cursor is in the params), plus the
//     negotiated protocol version, plus who may reuse it: a "public" result
//     is keyed by the server (Options.CacheServer), a "private" one, and one
//     without cacheScope, by the server and the authorization context
//     (Options.CacheIdentity). Left empty, both are a token of the session's
//     own, so nothing is shared between sessions unless the program names
//     the server and, for private entries, the identity.
//   - Nothing is kept without a positive ttlMs, so on the legacy revisions,
//     which have no ttlMs, nothing is cached unless the server sends one;
//     an input_required result is never kept, nor a result that needed
//     input_required rounds, nor the answer to a request carrying
//     inputResponses or requestState (MRTR retries, [M-NOT]).
//   - notifications/tools/list_changed, prompts/list_changed and
//     resources/list_changed drop the entries of their lists, and
//     notifications/resources/updated those of resources/read for its URI,
//     for every session sharing the server's entries, before any subscriber
//     sees the notification; a result that was in flight when one arrived is
//     not kept. An invalid cursor drops every page of its list.
//   - Every path that sends a cacheable request goes through it: the typed
//     methods, the merged lists, the iterators and page methods, and Call
//     (so transport.Call and the CLI). Ping's server/discover does not: a
//     ping answered from a cache would prove nothing.
//
// The cache sits above the middleware chain (middleware.go): a hit sends
// nothing, so no middleware sees it.

// Defaults of CacheOptions.
const (
	DefaultCacheMaxEntries = 1024
	DefaultCacheMaxBytes   = 16 << 20
)

// CacheOptions bound a Cache. The zero value (or nil) gives the defaults.
type CacheOptions struct {
	// MaxEntries bounds the number of results kept. Zero means
	// DefaultCacheMaxEntries.
	MaxEntries int
	// MaxBytes bounds the bytes of the results kept (with their keys); a
	// result larger than that is not kept. Zero means
	// DefaultCacheMaxBytes.
	MaxBytes int64
}

// Cache keeps results servers allowed to cache, bounded in entries and
// bytes; past a bound the least recently used go first. Each Session has
// one of its own unless Options.Cache gives one to share: sessions that name
// the same Options.CacheServer then share public entries, and, with the same
// Options.CacheIdentity too, private ones. A Cache is safe for concurrent
// use by any number of sessions.
type Cache struct {
	maxEntries int
	maxBytes   int64
	now        func() time.Time // replaced by tests

	mu      sync.Mutex
	bytes   int64
	lru     list.List // of *cacheEntry, most recently used first
	entries map[string]*list.Element
	// epochs counts invalidations per server key: a result requested
	// before one and answered after it is not kept.
	epochs map[string]uint64
	hits   uint64
	misses uint64
}

type cacheEntry struct {
	key     string
	server  string
	owner   string // the session token of a per-session private entry
	method  string
	uri     string // resources/read's uri
	result  json.RawMessage
	expires time.Time
}

// NewCache returns an empty Cache.
func NewCache(opts *CacheOptions) *Cache {
	c := &Cache{
		maxEntries: DefaultCacheMaxEntries,
		maxBytes:   DefaultCacheMaxBytes,
		now:        time.Now,
		entries:    map[string]*list.Element{},
		epochs:     map[string]uint64{},
	}
	if opts != nil {
		if opts.MaxEntries > 0 {
			c.maxEntries = opts.MaxEntries
		}
		if opts.MaxBytes > 0 {
			c.maxBytes = opts.MaxBytes
		}
	}
	return c
}

// CacheStats counts a Cache's use.
type CacheStats struct {
	Entries int
	Bytes   int64
	// Hits counts requests answered from the cache; Misses the cacheable
	// requests that were sent.
	Hits, Misses uint64
}

// Stats returns the cache's counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Entries: c.lru.Len(), Bytes: c.bytes, Hits: c.hits, Misses: c.misses}
}

// Clear drops every entry.
func (c *Cache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for s := range c.epochs {
		c.epochs[s]++
	}
	c.lru.Init()
	clear(c.entries)
	c.bytes = 0
}

// get returns a copy of the fresh entry under one of keys, and otherwise the
// server's epoch, to hand to put.
func (c *Cache) get(server string, keys ...string) (json.RawMessage, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for _, k := range keys {
		el, ok := c.entries[k]
		if !ok {
			continue
		}
		e := el.Value.(*cacheEntry)
		if !now.Before(e.expires) {
			c.removeLocked(el)
			continue
		}
		c.lru.MoveToFront(el)
		c.hits++
		// A copy: callers may keep or alias what they are given.
		return bytes.Clone(e.result), 0, true
	}
	c.misses++
	return nil, c.epochs[server], false
}

// put keeps e for ttl unless its server was invalidated since epoch, or it
// is too large for the cache.
func (c *Cache) put(e *cacheEntry, ttl time.Duration, epoch uint64) {
	size := int64(len(e.key) + len(e.result))
	if size > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epochs[e.server] != epoch {
		return
	}
	e.expires = c.now().Add(ttl)
	if el, ok := c.entries[e.key]; ok {
		c.removeLocked(el)
	}
	c.entries[e.key] = c.lru.PushFront(e)
	c.bytes += size
	for c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.removeLocked(c.lru.Back())
	}
}

func (c *Cache) removeLocked(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.bytes -= int64(len(e.key) + len(e.result))
}

// invalidate drops the entries of server for which drop says so, and makes
// results in flight for server not be kept.
func (c *Cache) invalidate(server string, drop func(*cacheEntry) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epochs[server]++
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*cacheEntry); e.server == server && drop(e) {
			c.removeLocked(el)
		}
		el = next
	}
}

// sessionCache is one Session's view of a Cache.
type sessionCache struct {
	c        *Cache
	server   string // the key of the server's entries
	identity string // the key of the authorization context's private entries
	token    string // this session's own: owner of per-session private entries
}

// sessionTokens numbers the sessions of the process, each session's key
// of its own entries in a shared Cache. A Cache lives in memory and never
// leaves the process, so a counter makes keys as unique as random ones
// would, without linking crypto/rand (and the FIPS module behind it) into
// every program.
var sessionTokens atomic.Uint64

// newCache gives the session its view of the cache: Options.Cache or a
// cache of its own, nil with Options.DisableCache.
func (s *Session) newCache() *sessionCache {
	if s.opts.DisableCache {
		return nil
	}
	token := "session:" + strconv.FormatUint(sessionTokens.Add(1), 10)
	sc := &sessionCache{c: s.opts.Cache, server: token, identity: token, token: token}
	if sc.c == nil {
		sc.c = NewCache(nil)
	}
	if s.opts.CacheServer != "" {
		sc.server = "server:" + s.opts.CacheServer
		if s.opts.CacheIdentity != "" {
			sc.identity = "identity:" + s.opts.CacheIdentity
		}
	}
	return sc
}

// cacheable reports whether method's results may carry ttlMs.
func cacheable(method string) bool {
	switch method {
	case mcp.MethodDiscover, mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList,
		mcp.MethodResourcesTemplatesList, mcp.MethodResourcesRead:
		return true
	}
	return false
}

// cacheParams returns the part of params that goes into a key: the params
// without _meta. ok is false for params that must not be cached (an MRTR
// retry: inputResponses or requestState) or that are not a JSON object.
// uri is resources/read's, for notifications/resources/updated.
func cacheParams(method string, params json.RawMessage) (key, uri string, ok bool) {
	body := bytes.TrimSpace(params)
	if len(body) == 0 || string(body) == "null" || string(body) == "{}" {
		return "", "", method != mcp.MethodResourcesRead
	}
	if method != mcp.MethodResourcesRead && !bytes.Contains(body, []byte(`"_meta"`)) &&
		!bytes.Contains(body, []byte(`"inputResponses"`)) && !bytes.Contains(body, []byte(`"requestState"`)) {
		return string(body), "", true
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return "", "", false
	}
	if _, retry := obj["inputResponses"]; retry {
		return "", "", false
	}
	if _, retry := obj["requestState"]; retry {
		return "", "", false
	}
	if raw, has := obj["uri"]; has {
		if json.Unmarshal(raw, &uri) != nil {
			return "", "", false
		}
	}
	delete(obj, "_meta")
	b, err := json.Marshal(obj) // sorted keys: one key for one request
	if err != nil {
		return "", "", false
	}
	return string(b), uri, true
}

// MaxCacheTTL bounds how long a result is kept, whatever ttlMs the server
// gave: a peer cannot pin a result for years.
const MaxCacheTTL = 24 * time.Hour

// cachedCall answers a cacheable request from the cache, or sends it and
// keeps its result if the server allows.
func (s *Session) cachedCall(ctx context.Context, method string, params json.RawMessage, info *RequestInfo) (json.RawMessage, error) {
	pkey, uri, ok := cacheParams(method, params)
	if !ok {
		res, _, err := s.callRounds(ctx, method, params, info)
		return res, err
	}
	sc := s.cache
	base := s.ServerInfo().ProtocolVersion + "\x00" + method + "\x00" + pkey
	public := sc.server + "\x00\x00" + base
	private := sc.server + "\x00" + sc.identity + "\x00" + base
	res, epoch, hit := sc.c.get(sc.server, private, public)
	if hit {
		return res, nil
	}
	res, answered, err := s.callRounds(ctx, method, params, info)
	if err != nil || answered {
		return res, err
	}
	var head struct {
		ResultType string `json:"resultType"`
		TTLMs      *int64 `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
	}
	if json.Unmarshal(res, &head) != nil || head.TTLMs == nil || *head.TTLMs <= 0 ||
		(head.ResultType != "" && head.ResultType != mcp.ResultTypeComplete) {
		return res, nil
	}
	ttl := MaxCacheTTL
	if *head.TTLMs < int64(MaxCacheTTL/time.Millisecond) {
		ttl = time.Duration(*head.TTLMs) * time.Millisecond
	}
	e := &cacheEntry{key: private, server: sc.server, method: method, uri: uri,
		result: bytes.Clone(res)}
	switch {
	case head.CacheScope == "public":
		e.key = public
	case sc.identity == sc.token:
		e.owner = sc.token
	}
	sc.c.put(e, ttl, epoch)
	return res, nil
}

// dropMethods drops the entries of the given methods for this session's
// server, all pages, every identity.
func (sc *sessionCache) dropMethods(methods ...string) {
	sc.c.invalidate(sc.server, func(e *cacheEntry) bool { return slices.Contains(methods, e.method) })
}

// notified applies the invalidation a server notification implies. It runs
// on the reader goroutine, before the notification is queued for
// subscribers, so a subscriber that lists again sees no stale entry.
func (sc *sessionCache) notified(msg *mcp.Message) {
	switch msg.Method {
	case mcp.NotificationToolsListChanged:
		sc.dropMethods(mcp.MethodToolsList)
	case mcp.NotificationPromptsListChanged:
		sc.dropMethods(mcp.MethodPromptsList)
	case mcp.NotificationResourcesListChanged:
		sc.dropMethods(mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList)
	case mcp.NotificationResourceUpdated:
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(msg.Params, &p) != nil {
			// Cannot tell which: drop them all.
			sc.dropMethods(mcp.MethodResourcesRead)
			return
		}
		sc.c.invalidate(sc.server, func(e *cacheEntry) bool { return e.method == mcp.MethodResourcesRead && e.uri == p.URI })
	}
}

// release drops the private entries only this session could use, when it
// shares a cache.
func (sc *sessionCache) release() {
	sc.c.invalidate(sc.server, func(e *cacheEntry) bool { return e.owner == sc.token })
}

// CachesResults reports whether the session keeps results the server
// allows to be cached (it does unless Options.DisableCache is set). The
// registry uses it to leave the decision to list again to the session.
func (s *Session) CachesResults() bool { return s.cache != nil }

// dropPages drops every cached page of list method: the server refused a
// cursor, so the pages kept may no longer belong together (§6B).
func (s *Session) dropPages(method string) {
	if s.cache != nil {
		s.cache.dropMethods(method)
	}
}

// ResultCacher is implemented by transports that keep results for as long
// as the server allows (Session, unless Options.DisableCache). A program
// that lists again on a timer, such as the registry's Refresh, may then
// simply ask: the transport answers from its cache while the server's
// ttlMs holds and sends nothing.
type ResultCacher interface {
	CachesResults() bool
}

var _ ResultCacher = (*Session)(nil)
