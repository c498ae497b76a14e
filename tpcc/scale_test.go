package tpcc

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The figures of each scale, as the design fixes them.
func TestScaleFigures(t *testing.T) {
	for _, c := range []struct {
		sc                                                      Scale
		name                                                    string
		items, customers, newOrders, firstNew, delivered, names int
	}{
		{FullScale, "full", 100_000, 3000, 900, 2101, 2100, 1000},
		{Scale{Items: Items, CustomersPerDistrict: CustomersPerDistrict}, "full", 100_000, 3000, 900, 2101, 2100, 1000},
		{SmallScale, "small", 10_000, 300, 90, 211, 210, 300},
		{Scale{Items: 2500, CustomersPerDistrict: 1200}, "items=2500 customers_per_district=1200", 2500, 1200, 360, 841, 840, 1000},
	} {
		sc := c.sc
		require.NoError(t, sc.Validate(), c.name)
		require.Equal(t, c.name, sc.String())
		require.Equal(t, c.items, sc.NumItems(), c.name)
		require.Equal(t, c.customers, sc.Customers(), c.name)
		require.Equal(t, c.customers, sc.Orders(), c.name)
		require.Equal(t, c.newOrders, sc.NewOrders(), c.name)
		require.Equal(t, c.firstNew, sc.FirstNewOrder(), c.name)
		require.Equal(t, c.delivered, sc.DeliveredPerDistrict(), c.name)
		require.Equal(t, c.names, sc.LastNames(), c.name)
		require.Equal(t, c.name == "full", sc.IsFull(), c.name)

		b, err := json.Marshal(sc)
		require.NoError(t, err)
		require.Equal(t, `"`+c.name+`"`, string(b))
		var back Scale
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, sc.canonical(), back, c.name)
	}
	// The full scale's figures are the package's constants.
	require.Equal(t, FirstNewOrder, FullScale.FirstNewOrder())
	require.Equal(t, NewOrdersPerDistrict, FullScale.NewOrders())
	require.Equal(t, DeliveredPerDistrictAtLoad, FullScale.DeliveredPerDistrict())
	require.Equal(t, []string{"full", "small"}, ScaleNames())
}

// A scale is named or refused with the accepted names; figures out of
// range are refused, naming the value and the range.
func TestScaleBad(t *testing.T) {
	for _, name := range []string{"full", "small"} {
		sc, err := ParseScale(name)
		require.NoError(t, err)
		require.Equal(t, name, sc.String())
	}
	_, err := ParseScale("huge")
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, `scale "huge": want one of full, small`)

	for _, c := range []struct {
		sc   Scale
		want string
	}{
		{Scale{Items: -1}, "-1 items: want 1 to 100000"},
		{Scale{Items: 100_001}, "100001 items: want 1 to 100000"},
		{Scale{CustomersPerDistrict: -10}, "-10 customers per district: want a multiple of 10 from 10 to 3000"},
		{Scale{CustomersPerDistrict: 305}, "305 customers per district"},
		{Scale{CustomersPerDistrict: 3010}, "3010 customers per district"},
	} {
		err := c.sc.Validate()
		require.ErrorIs(t, err, ErrInvalidConfig, "%+v", c.sc)
		require.ErrorContains(t, err, c.want)
	}
	for _, text := range []string{`"huge"`, `"items=5 customers_per_district=7"`, `"items=0 customers_per_district=10"`,
		`"items=5 customers_per_district=10 and more"`} {
		var sc Scale
		require.ErrorIs(t, json.Unmarshal([]byte(text), &sc), ErrInvalidConfig, text)
	}
}

// SetScale keeps the draws within the population: customer ids, items and
// last names are NURand with the scale's ranges (the last names only those
// a district holds), the same calls as at full scale; a generator set to
// full scale draws what one never set does.
func TestRandScale(t *testing.T) {
	c := Constants{CLast: 123, CID: 259, CItem: 7911}
	g, twin := NewRand(9, c), NewRand(9, c)
	g.SetScale(SmallScale)
	names := make(map[int]bool)
	for range 5000 {
		id := g.CustomerID()
		require.Equal(t, twin.NURand(ACID, 1, 300), id)
		item := g.ItemID()
		require.Equal(t, twin.NURand(AItem, 1, 10_000), item)
		n := g.LastNameNumber()
		require.Equal(t, twin.NURand(ALast, 0, 299), n)
		require.True(t, id >= 1 && id <= 300 && item >= 1 && item <= 10_000 && n >= 0 && n <= 299)
		names[n] = true
	}
	require.Greater(t, len(names), 250, "the draws cover the district's names")

	g, twin = NewRand(9, c), NewRand(9, c)
	g.SetScale(FullScale)
	for range 100 {
		require.Equal(t, twin.CustomerID(), g.CustomerID())
		require.Equal(t, twin.ItemID(), g.ItemID())
		require.Equal(t, twin.RandomLastName(), g.RandomLastName())
	}
}

// The full scale is the population and the inputs there always were: the
// generator's rows of the smaller tables of a W = 1 load, and a terminal's
// customer, item and last-name draws, hash to the values they had before
// Scale existed. (ITEM, STOCK and ORDER_LINE are left out for time; they
// are drawn by the same code paths.)
func TestFullScalePinned(t *testing.T) {
	h := generatedHashes(t, LoadConfig{Warehouses: 1, Seed: testSeed}, tWarehouse, tCustomer, tHistory, tOrders, tNewOrder)
	require.Equal(t, map[string]uint64{
		Warehouse: 0x1fb3262c35a39f2b,
		District:  0xc683f81c4c68d278,
		Customer:  0xf7117fa57f0c7ecc,
		History:   0x31b22e990cba3c53,
		Orders:    0x80721a2927e1d23c,
		NewOrder:  0x1488b8fddea60bb1,
	}, h)

	g := NewRand(testSeed, NewRunConstants(7, NewLoadConstants(testSeed)))
	g.SetScale(FullScale)
	var s uint64
	for range 1000 {
		s = s*1_000_003 + uint64(g.CustomerID())
		s = s*1_000_003 + uint64(g.ItemID())
		s = s*1_000_003 + uint64(g.LastNameNumber())
	}
	require.Equal(t, uint64(0xfd7a0418fe49010f), s)
}
