package client

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSpec reads the command's --client value: a personality's name,
// then settings separated by commas: defaults (the personality's own,
// pgjdbc's prepareThreshold 5 and plan cache), prepared, plan-cache,
// fetch-size=N, cursor-fetch, batch, rewrite-batched, bulk,
// prepare-threshold=N, c-client. Without a setting the kit runs with
// everything off (Connector/J's and MariaDB Connector/J's defaults).
// Its errors wrap ErrInvalidConfig.
func ParseSpec(spec string) (*Config, error) {
	parts := strings.Split(spec, ",")
	p, err := Lookup(parts[0])
	if err != nil {
		return nil, fmt.Errorf("--client %s: %w", spec, err)
	}
	c := &Config{Personality: p.Name}
	s := &c.Settings
	for _, part := range parts[1:] {
		key, val, hasVal := strings.Cut(part, "=")
		num := func() (int, error) {
			n, err := strconv.Atoi(val)
			if !hasVal || err != nil || n < 0 {
				return 0, fmt.Errorf("%w: --client %s: want %s=N, N from 0", ErrInvalidConfig, spec, key)
			}
			return n, nil
		}
		switch key {
		case "defaults":
			*s = p.Defaults
		case "prepared":
			s.ServerPrepare = true
			if p.Protocol == PostgreSQL && s.PrepareThreshold == 0 {
				s.PrepareThreshold = p.Defaults.PrepareThreshold
			}
		case "plan-cache":
			s.PlanCache = true
		case "cursor-fetch":
			s.CursorFetch = true
		case "batch":
			s.Batch = true
		case "rewrite-batched":
			s.RewriteBatched = true
		case "bulk":
			s.BulkStmts = true
		case "c-client":
			s.CClient = true
		case "fetch-size":
			if s.FetchSize, err = num(); err != nil {
				return nil, err
			}
		case "prepare-threshold":
			if s.PrepareThreshold, err = num(); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%w: --client %s: unknown setting %q", ErrInvalidConfig, spec, part)
		}
	}
	return c, nil
}
