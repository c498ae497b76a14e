package tpcc

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/engine"
)

// The load stores what it was in tpcc_config; an empty database has none.
func TestReadLoaded(t *testing.T) {
	db, stats := loadW1(t)
	l, err := ReadLoaded(db)
	require.NoError(t, err)
	require.Equal(t, Loaded{Warehouses: 1, Seed: testSeed, Constants: stats.Constants, Org: engine.Clustered,
		LoadTime: DefaultLoadTime}, l)
	require.Equal(t, NewLoadConstants(testSeed), l.Constants)

	empty, err := engine.Open(&engine.Options{})
	require.NoError(t, err)
	defer empty.Close()
	_, err = ReadLoaded(empty)
	require.ErrorIs(t, err, ErrNotLoaded)
	require.ErrorContains(t, err, ConfigTable)
}
