package httpauth_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/tako-mcp/tako/transport/httpauth"
)

// TestTokenSource: the token goes in a bearer header, "" sends none, the
// source's error stops the request, and a refusal is final.
func TestTokenSource(t *testing.T) {
	tok, fail := "tøken-1", errors.New("the vault is sealed")
	var src httpauth.Authorizer = httpauth.TokenSource(func(ctx context.Context) (string, error) {
		if tok == "fail" {
			return "", fail
		}
		return tok, nil
	})
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	if err := src.AuthorizeRequest(req); err != nil || req.Header.Get("Authorization") != "Bearer tøken-1" {
		t.Fatalf("AuthorizeRequest: %v, header %q", err, req.Header.Get("Authorization"))
	}
	tok = ""
	req.Header.Del("Authorization")
	if err := src.AuthorizeRequest(req); err != nil || req.Header.Values("Authorization") != nil {
		t.Fatalf("empty token: %v, header %q", err, req.Header.Values("Authorization"))
	}
	tok = "fail"
	if err := src.AuthorizeRequest(req); !errors.Is(err, fail) {
		t.Fatalf("failing source: %v, want %v", err, fail)
	}
	if err := src.HandleUnauthorized(context.Background(), &http.Response{StatusCode: http.StatusUnauthorized, Request: req}); err == nil {
		t.Fatal("HandleUnauthorized returned nil: the request would be sent again with the same token")
	}
}
