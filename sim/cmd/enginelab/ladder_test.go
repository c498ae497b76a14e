package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The talk ladder is listed, documents the experiment flags, and refuses
// a bad one before it runs.
func TestLadderCommand(t *testing.T) {
	st, out, _ := enginelab("experiment", "list")
	require.Zero(t, st)
	require.Contains(t, out, "talk-ladder")

	st, out, _ = enginelab("experiment", "talk-ladder", "--help")
	require.Zero(t, st)
	require.Contains(t, out, "mysql-jdbc and pgjdbc")
	require.Regexp(t, `(?m)^  -terminals( |$)`, out)

	st, _, errOut := enginelab("experiment", "talk-ladder", "--terminals", "-1")
	require.Equal(t, 2, st)
	require.Contains(t, errOut, "--terminals must not be negative")
}
