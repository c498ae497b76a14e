package tpcc

import (
	"fmt"
	"strconv"
	"time"

	"github.com/enginelab/enginelab/engine"
)

// ConfigTable holds what a load was, as BenchmarkSQL's bmsql_config does:
// one row per setting, (cfg_name, cfg_value). A run on a stored database
// needs the load's warehouses and NURand constants (a run's C_LAST
// constant must keep its distance from the load's [2.1.6.1]); Load writes
// the table last, so a database without it was not completely loaded.
//
//	cfg_name        cfg_value
//	warehouses      W
//	seed            the load's seed
//	nurand_c_last   C for A = 255
//	nurand_c_id     C for A = 1023
//	nurand_ol_i_id  C for A = 8191
//	org             the nine tables' organization
//	load_time       the load's timestamp (RFC 3339, UTC)
//	items           the scale's items (Scale.NumItems)
//	customers_per_district
//	                the scale's customers per district (Scale.Customers)
//
// A database loaded before the scale was stored has neither of the last
// two settings: it is read as full scale, the only one there was.
const ConfigTable = "tpcc_config"

// Loaded describes the load of a database.
type Loaded struct {
	Warehouses int
	// Scale is the population's size; full scale is the zero Scale.
	Scale     Scale
	Seed      uint64
	Constants Constants
	Org       engine.Org
	LoadTime  time.Time
	// HeapVersions says the tables keep PostgreSQL's row versions
	// (engine.Options.HeapVersions at the load). It is not a setting of
	// ConfigTable: the catalog records it per table, and ReadLoaded
	// reads STOCK's (ConfigTable itself has the database's default
	// organization, not the load's).
	HeapVersions bool
}

func configTable() engine.Table {
	return engine.Table{Name: ConfigTable, Columns: []engine.Column{str("cfg_name", 30), str("cfg_value", 50)},
		PrimaryKey: []string{"cfg_name"}}
}

// writeLoaded creates ConfigTable and stores l in it, in one transaction.
func writeLoaded(db *engine.DB, l Loaded) error {
	h, err := db.CreateTable(configTable())
	if err != nil {
		return fmt.Errorf("tpcc: load: create table %s: %w", ConfigTable, err)
	}
	tx := db.Begin(nil)
	for _, kv := range [][2]string{
		{"warehouses", strconv.Itoa(l.Warehouses)},
		{"seed", strconv.FormatUint(l.Seed, 10)},
		{"nurand_c_last", strconv.Itoa(l.Constants.CLast)},
		{"nurand_c_id", strconv.Itoa(l.Constants.CID)},
		{"nurand_ol_i_id", strconv.Itoa(l.Constants.CItem)},
		{"org", l.Org.String()},
		{"load_time", l.LoadTime.UTC().Format(time.RFC3339Nano)},
		{"items", strconv.Itoa(l.Scale.NumItems())},
		{"customers_per_district", strconv.Itoa(l.Scale.Customers())},
	} {
		if err := tx.Insert(h, engine.Row{engine.Str(kv[0]), engine.Str(kv[1])}); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("tpcc: load: %s: %w", ConfigTable, err)
		}
	}
	return tx.Commit()
}

// ReadLoaded reads what Load stored in ConfigTable. A database without the
// table (empty, or a load that did not finish) gives an error wrapping
// ErrNotLoaded.
func ReadLoaded(db *engine.DB) (Loaded, error) {
	h, err := db.Table(ConfigTable)
	if err != nil {
		return Loaded{}, fmt.Errorf("%w: no table %s (an empty database, or a load that did not finish): %w", ErrNotLoaded, ConfigTable, err)
	}
	tx := db.Begin(nil)
	defer tx.Commit()
	cur, err := tx.Scan(h, engine.ScanOptions{})
	if err != nil {
		return Loaded{}, err
	}
	kv := map[string]string{}
	for cur.Next() {
		r := cur.Row()
		kv[string(r[0].B)] = string(r[1].B)
	}
	if err := cur.Close(); err != nil {
		return Loaded{}, err
	}
	var l Loaded
	bad := func(name string, err error) error {
		return fmt.Errorf("%w: %s: setting %s = %q: %v", ErrNotLoaded, ConfigTable, name, kv[name], err)
	}
	ints := []struct {
		name string
		p    *int
	}{{"warehouses", &l.Warehouses}, {"nurand_c_last", &l.Constants.CLast}, {"nurand_c_id", &l.Constants.CID}, {"nurand_ol_i_id", &l.Constants.CItem}}
	for _, x := range ints {
		if *x.p, err = strconv.Atoi(kv[x.name]); err != nil {
			return Loaded{}, bad(x.name, err)
		}
	}
	if l.Seed, err = strconv.ParseUint(kv["seed"], 10, 64); err != nil {
		return Loaded{}, bad("seed", err)
	}
	if l.Org, err = engine.ParseOrg(kv["org"]); err != nil {
		return Loaded{}, bad("org", err)
	}
	if l.LoadTime, err = time.Parse(time.RFC3339Nano, kv["load_time"]); err != nil {
		return Loaded{}, bad("load_time", err)
	}
	l.Scale = Scale{Items: Items, CustomersPerDistrict: CustomersPerDistrict}
	for _, x := range []struct {
		name string
		p    *int
	}{{"items", &l.Scale.Items}, {"customers_per_district", &l.Scale.CustomersPerDistrict}} {
		v, ok := kv[x.name]
		if !ok {
			continue // stored before the scale was: full scale
		}
		if *x.p, err = strconv.Atoi(v); err != nil {
			return Loaded{}, bad(x.name, err)
		}
	}
	if l.Scale.Items == 0 || l.Scale.CustomersPerDistrict == 0 {
		return Loaded{}, fmt.Errorf("%w: %s: a scale of %d items and %d customers per district", ErrNotLoaded, ConfigTable,
			l.Scale.Items, l.Scale.CustomersPerDistrict)
	}
	if err := l.Scale.Validate(); err != nil {
		return Loaded{}, fmt.Errorf("%w: %s: %w", ErrNotLoaded, ConfigTable, err)
	}
	l.Scale = l.Scale.canonical()
	st, err := db.Table(Stock)
	if err != nil {
		return Loaded{}, fmt.Errorf("%w: %w", ErrNotLoaded, err)
	}
	l.HeapVersions = st.Versioned()
	return l, nil
}
