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

// A tpcc_config without the scale's settings (written before they were
// stored) is read as full scale; stored figures out of range are refused.
func TestReadLoadedScale(t *testing.T) {
	write := func(t *testing.T, extra ...[2]string) *engine.DB {
		db, err := engine.Open(&engine.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		h, err := db.CreateTable(configTable())
		require.NoError(t, err)
		for _, def := range Tables(engine.Clustered) {
			if def.Name == Stock {
				_, err := db.CreateTable(def)
				require.NoError(t, err)
			}
		}
		tx := db.Begin(nil)
		for _, kv := range append([][2]string{{"warehouses", "2"}, {"seed", "5"}, {"nurand_c_last", "1"}, {"nurand_c_id", "2"},
			{"nurand_ol_i_id", "3"}, {"org", "clustered"}, {"load_time", "2025-01-01T00:00:00Z"}}, extra...) {
			require.NoError(t, tx.Insert(h, engine.Row{engine.Str(kv[0]), engine.Str(kv[1])}))
		}
		require.NoError(t, tx.Commit())
		return db
	}
	l, err := ReadLoaded(write(t))
	require.NoError(t, err)
	require.Equal(t, FullScale, l.Scale)
	require.Equal(t, 2, l.Warehouses)

	l, err = ReadLoaded(write(t, [2]string{"items", "10000"}, [2]string{"customers_per_district", "300"}))
	require.NoError(t, err)
	require.Equal(t, SmallScale, l.Scale)
	l, err = ReadLoaded(write(t, [2]string{"items", "100000"}, [2]string{"customers_per_district", "3000"}))
	require.NoError(t, err)
	require.Equal(t, FullScale, l.Scale, "the full figures, stored, are full scale")

	for _, bad := range [][2]string{{"items", "0"}, {"items", "x"}, {"customers_per_district", "305"}, {"items", "200000"}} {
		_, err := ReadLoaded(write(t, bad))
		require.ErrorIs(t, err, ErrNotLoaded, "%v", bad)
		require.ErrorContains(t, err, ConfigTable)
	}
}
