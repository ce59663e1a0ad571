package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/tako-mcp/tako/auth"
)

// clientMetadataURL is the client ID metadata document URL the suite
// expects (its auth/basic-cimd scenario).
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// suiteContext is MCP_CONFORMANCE_CONTEXT for the authorization scenarios:
// credentials the suite registered for the client ahead of time.
type suiteContext struct {
	Name             string `json:"name"`
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`

	IDPClientID      string `json:"idp_client_id"`
	IDPIDToken       string `json:"idp_id_token"`
	IDPTokenEndpoint string `json:"idp_token_endpoint"`

	ValidJWT string `json:"valid_jwt"`
}

// authConfig is the auth.Config for a scenario: the headless user step
// (the suite's authorization endpoint redirects at once), this client's
// metadata document URL, DPoP where the server offers it, and whatever
// the context pre-registers. The grant follows from the credentials the
// context carries, as a program's configuration would decide it.
func authConfig(scenario, raw string, logger *slog.Logger) (*auth.Config, error) {
	cfg := &auth.Config{
		User:              &auth.Headless{},
		ClientMetadataURL: clientMetadataURL,
		ClientName:        "tako-conformance-client",
		DPoP:              true,
		Logger:            logger,
	}
	if raw == "" {
		return cfg, nil
	}
	var sc suiteContext
	if err := json.Unmarshal([]byte(raw), &sc); err != nil {
		return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	if sc.ClientID == "" {
		return cfg, nil
	}
	cfg.Client = &auth.StaticClient{ID: sc.ClientID, Secret: auth.Secret(sc.ClientSecret), SigningAlg: sc.SigningAlgorithm}
	switch {
	case sc.PrivateKeyPEM != "":
		key, err := auth.ParsePrivateKeyPEM([]byte(sc.PrivateKeyPEM))
		if err != nil {
			return nil, err
		}
		cfg.Client.PrivateKey = key
		cfg.Grant = auth.ClientCredentials{}
	case sc.IDPIDToken != "":
		cfg.Grant = auth.EnterpriseManaged{
			IDPTokenEndpoint: sc.IDPTokenEndpoint,
			IDPClientID:      sc.IDPClientID,
			IDToken:          func(context.Context) (string, error) { return sc.IDPIDToken, nil },
		}
	case sc.ValidJWT != "":
		cfg.Grant = auth.JWTBearer{Assertion: func(context.Context, string) (string, error) { return sc.ValidJWT, nil }}
	case scenario == "auth/client-credentials-basic":
		cfg.Grant = auth.ClientCredentials{}
	}
	return cfg, nil
}
