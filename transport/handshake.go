package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/tako-mcp/tako/mcp"
)

// handshake decides the era and negotiates the version (checklist §1A, §1B).
func (s *Session) handshake(ctx context.Context) error {
	want := s.opts.ProtocolVersion
	if want != "" && !mcp.IsSupportedVersion(want) {
		return fmt.Errorf("%w: tako does not speak %q", ErrUnsupportedVersion, want)
	}
	if l := s.opts.LogLevel; l != "" && !l.IsValid() {
		return fmt.Errorf("mcp: Options.LogLevel %q is not a logging level", l)
	}
	if err := checkRoots(s.opts.Roots); err != nil {
		return fmt.Errorf("Options.Roots: %w", err)
	}
	if want == "" || mcp.IsModernVersion(want) {
		version := want
		if version == "" {
			version = mcp.LatestVersion
		}
		done, err := s.discover(ctx, version, want != "")
		if done || err != nil {
			return err
		}
		if want != "" {
			return fmt.Errorf("%w: the server does not answer server/discover for %s", ErrUnsupportedVersion, want)
		}
	}
	legacy := want
	if legacy == "" {
		legacy = mcp.LatestLegacyVersion
	}
	return s.initialize(ctx, legacy)
}

// discover probes with server/discover. It returns done=true when the
// handshake is over (the server is modern, or its answer already led to
// initialize), done=false and no error when the server looks legacy and
// initialize should follow.
//
// ProbeTimeout bounds a silent server, not a person: a probe it ended while
// an authorization was under way (an AuthWaiter: a login in the browser)
// waits for the authorization under ctx and is sent again.
func (s *Session) discover(ctx context.Context, version string, pinned bool) (done bool, err error) {
	waits := 0
	for attempt := 0; attempt < 2; attempt++ {
		s.setModern(version)
		pctx, cancel := context.WithTimeout(ctx, s.opts.ProbeTimeout)
		res, err := s.roundTrip(pctx, mcp.MethodDiscover, nil, true, nil)
		cancel()
		if err != nil && waits < maxAuthWaits {
			again, werr := waitForAuth(ctx, err)
			if again {
				waits++
				attempt--
				continue
			}
			err = werr
		}
		if err == nil {
			r, err := mcp.DecodeDiscoverResult(res)
			if err != nil {
				if pinned {
					return false, fmt.Errorf("%w: %w", ErrProtocol, err)
				}
				// A success that is not a DiscoverResult: a legacy server
				// that answers methods it does not know with {} (or any
				// other result) is no evidence of the modern era.
				s.log.Debug("mcp: server/discover answered with something else; trying initialize", "err", err)
				s.clearModern()
				return false, nil
			}
			if len(r.SupportedVersions) > 0 && !slices.Contains(r.SupportedVersions, version) {
				if v := newestModern(r.SupportedVersions); v != "" && attempt == 0 && !pinned {
					version = v
					continue
				}
				if v := newestLegacy(r.SupportedVersions); v != "" && !pinned {
					s.clearModern()
					return true, s.initialize(ctx, v)
				}
				return false, fmt.Errorf("%w: server supports %v", ErrUnsupportedVersion, r.SupportedVersions)
			}
			info := ServerInfo{
				ProtocolVersion: version,
				Capabilities:    r.Capabilities,
				Instructions:    r.Instructions,
				Notifications:   true,
			}
			if raw, ok := r.Meta[mcp.MetaServerInfo]; ok {
				_ = json.Unmarshal(raw, &info.Implementation) // display only
			}
			s.setInfo(info)
			s.startListen(r.Capabilities)
			return true, nil
		}
		var rpcErr *mcp.Error
		switch {
		case errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeUnsupportedProtocolVersion:
			// A modern server that wants another modern version: modern
			// evidence, so no fallback (checklist §1B.11).
			var data mcp.UnsupportedVersionData
			_ = json.Unmarshal(rpcErr.Data, &data)
			// Retry once with a version both sides speak; a pinned version
			// is retried only as itself (a server may refuse a first
			// request and then take the same version).
			v := newestModern(data.Supported)
			if pinned && !slices.Contains(data.Supported, version) {
				v = ""
			} else if pinned {
				v = version
			}
			if v == "" || attempt > 0 {
				if v := newestLegacy(data.Supported); v != "" && !pinned {
					s.clearModern()
					return true, s.initialize(ctx, v)
				}
				return false, fmt.Errorf("%w: server supports %v", ErrUnsupportedVersion, data.Supported)
			}
			version = v
			continue
		case ctx.Err() != nil:
			return false, err
		case errors.Is(err, ErrAuthRequired):
			// A server that wants credentials for server/discover is not a
			// legacy server: falling back to initialize would lose the
			// challenge and report the wrong failure (ErrUnsupportedVersion).
			// An auth layer in the Conn has already had its chance to
			// authorize and send the probe again.
			return false, err
		case errors.Is(err, ErrNotMCP):
			// A web page where the endpoint should be: initialize would
			// get the same page, or wait out a timeout for an answer that
			// will never come.
			return false, err
		case s.Err() != nil:
			// The connection itself died: nothing to fall back on.
			return false, err
		}
		// Any other error, or silence: a legacy server.
		s.log.Debug("mcp: server/discover probe failed; trying initialize", "err", err)
		s.clearModern()
		return false, nil
	}
	return false, fmt.Errorf("%w: version negotiation did not settle", ErrUnsupportedVersion)
}

func (s *Session) setModern(version string) {
	s.modern = true
	s.metaVersion = version
	s.buildMeta()
	s.setProtocol(version)
}

// buildMeta writes the reserved _meta members every 2026-07-28 request
// carries; SetLogLevel writes them again when the level changes.
func (s *Session) buildMeta() {
	caps := s.caps
	if caps.Roots != nil {
		// 2026-07-28 roots have no listChanged.
		caps.Roots = &mcp.RootsCapability{}
	}
	// Nor core tasks: the client's receiver role ends with 2025-11-25.
	caps.Tasks = nil
	meta := map[string]any{
		mcp.MetaProtocolVersion:    s.metaVersion,
		mcp.MetaClientCapabilities: caps,
		mcp.MetaClientInfo:         s.opts.ClientInfo,
	}
	if level := s.currentLogLevel(); level != "" {
		meta[mcp.MetaLogLevel] = level
	}
	b, _ := json.Marshal(meta) // plain structs and strings: cannot fail
	body := b[1 : len(b)-1]
	s.metaBody.Store(&body)
	s.buildTaskMeta(meta, caps)
}

func (s *Session) clearModern() {
	s.modern = false
	s.metaBody.Store(nil)
	s.setProtocol("")
}

func newestModern(vs []string) string {
	best := ""
	for _, v := range vs {
		if mcp.IsSupportedVersion(v) && mcp.IsModernVersion(v) && v > best {
			best = v
		}
	}
	return best
}

func newestLegacy(vs []string) string {
	best := ""
	for _, v := range vs {
		if mcp.IsSupportedVersion(v) && !mcp.IsModernVersion(v) && v > best {
			best = v
		}
	}
	return best
}

// initialize runs the legacy handshake: initialize, then
// notifications/initialized (checklist §1A).
//
// An initialize the Conn reports refused with ErrLegacyWire (a Streamable
// HTTP endpoint that answers the POST with 400, 404 or 405: checklist
// §4C.9, §4D) is the era decision of the oldest wire: the engine asks the
// Conn to switch to it (Informed.SwitchWire), once, and sends the same
// initialize again there.
func (s *Session) initialize(ctx context.Context, version string) error {
	switched := false
	for attempt := 0; ; attempt++ {
		params := &mcp.InitializeParams{
			ProtocolVersion: version,
			Capabilities:    s.caps,
			ClientInfo:      s.opts.ClientInfo,
		}
		raw, _ := json.Marshal(params)
		res, err := s.roundTrip(ctx, mcp.MethodInitialize, raw, false, nil)
		if err != nil && !switched && s.informed != nil && errors.Is(err, ErrLegacyWire) {
			switched = true
			s.log.Debug("mcp: initialize refused; switching to the older wire", "err", err)
			if serr := s.informed.SwitchWire(ctx); serr != nil {
				return fmt.Errorf("%w; the older wire failed too: %w", err, serr)
			}
			attempt--
			continue
		}
		if err != nil {
			// Some servers refuse an unknown version with -32602 and the
			// list they support instead of offering one: retry once.
			var rpcErr *mcp.Error
			if attempt == 0 && errors.As(err, &rpcErr) && len(rpcErr.Data) > 0 {
				var data mcp.UnsupportedVersionData
				if json.Unmarshal(rpcErr.Data, &data) == nil {
					if v := newestLegacy(data.Supported); v != "" && v != version {
						version = v
						continue
					}
				}
			}
			return err
		}
		var r mcp.InitializeResult
		if err := json.Unmarshal(res, &r); err != nil {
			return fmt.Errorf("%w: initialize result: %v", ErrProtocol, err)
		}
		if !mcp.IsSupportedVersion(r.ProtocolVersion) || mcp.IsModernVersion(r.ProtocolVersion) {
			return fmt.Errorf("%w: server answered initialize with version %q", ErrUnsupportedVersion, r.ProtocolVersion)
		}
		s.setProtocol(r.ProtocolVersion)
		s.setInfo(ServerInfo{
			ProtocolVersion: r.ProtocolVersion,
			Implementation:  r.ServerInfo,
			Capabilities:    r.Capabilities,
			Instructions:    r.Instructions,
			Notifications:   true,
		})
		if err := s.Notify(ctx, mcp.NotificationInitialized, nil); err != nil {
			return err
		}
		if level := s.currentLogLevel(); level != "" && r.Capabilities.Logging != nil {
			if err := s.Call(ctx, mcp.MethodLoggingSetLevel, &mcp.SetLevelParams{Level: level}, nil); err != nil {
				s.log.Warn("mcp: logging/setLevel failed", "err", err)
			}
		}
		return nil
	}
}
