package bench

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tako-mcp/tako/bench/internal/floor"
	takows "github.com/tako-mcp/tako/websocket"
)

// wsTransport is WebSocket through tako's bridge (servers/bridge -ws, a
// fresh stdio backend per client). The go-sdk and mcp-go have no WebSocket
// client, so the floor is a hand-written one over gorilla/websocket frames.
var wsTransport = &Transport{
	Name: "ws",
	Serve: func(ctx context.Context, bins Bins, tools int) (*Endpoint, error) {
		srv, err := startServerProcess(ctx, bins.Bridge, bridgeArgs(bins, tools, "-ws", "127.0.0.1:0"), "ws://127.0.0.1:")
		if err != nil {
			return nil, err
		}
		return &Endpoint{URL: srv.url, Conns: srv.conns, close: srv.Close}, nil
	},
	kinds: []kind{
		{"floor", startFloorWS},
		{"tako", startTakoWS},
	},
}

func bridgeArgs(bins Bins, tools int, args ...string) []string {
	args = append([]string{"-backend", bins.GoSDK}, args...)
	if tools > 0 {
		args = append(args, "-tools", strconv.Itoa(tools))
	}
	return args
}

func startTakoWS(ctx context.Context, ep *Endpoint) (client, error) {
	conn, err := takows.Dial(ctx, ep.URL, nil)
	if err != nil {
		return nil, err
	}
	return connectTako(ctx, conn)
}

// startFloorWS is the stdio floor with frames for lines: WriteJSON of each
// message (one text frame), one reader goroutine that reads each frame
// whole and unmarshals it, the same pending map. Subprotocol "mcp", as
// tako's bridge asks.
func startFloorWS(ctx context.Context, ep *Endpoint) (client, error) {
	d := websocket.Dialer{Subprotocols: []string{"mcp"}, HandshakeTimeout: 30 * time.Second}
	ws, _, err := d.DialContext(ctx, ep.URL, nil)
	if err != nil {
		return nil, err
	}
	c := floor.NewClient()
	c.Send = ws.WriteJSON
	c.Stop = func() error {
		err := c.WriteLocked(func() error {
			return ws.WriteControl(websocket.CloseMessage,
				websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		})
		// The bridge answers the close frame and ends the connection,
		// which ends the reader; a peer that does not is cut off.
		select {
		case <-c.Done():
		case <-time.After(2 * time.Second):
		}
		return errors.Join(err, ws.Close())
	}
	go c.ReadLoop(func(v any) error {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return err
		}
		return json.Unmarshal(data, v)
	})
	if err := c.Initialize(ctx, protocolVersion); err != nil {
		return nil, err
	}
	return floorClient{c}, nil
}
