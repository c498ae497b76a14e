package tpcc

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/enginelab/enginelab/engine"
)

// Profile is how a client kit phrases the queries the specification leaves
// to it: the heart of the talk behind this project. Each is modeled on the
// public queries of a real client.
type Profile int

// Client access profiles.
const (
	// Optimized counts with count(*), reads only the columns and rows it
	// uses, and takes the oldest new order with LIMIT 1.
	Optimized Profile = iota
	// Sysbench (sysbench-tpcc; go-tpc's Order-Status too) counts the
	// matching customers with count(c_id), then reads the matching rows
	// ordered by c_first; Delivery uses LIMIT 1.
	Sysbench
	// BenchmarkSQL reads the list of matching c_ids ordered by c_first,
	// then the chosen customer's row; Delivery reads every undelivered
	// order of the district, in order, and uses the first (more rows
	// returned than consumed).
	BenchmarkSQL
	numProfiles
)

var profileNames = [numProfiles]string{"optimized", "sysbench", "benchmarksql"}

func (p Profile) String() string {
	if p >= 0 && p < numProfiles {
		return profileNames[p]
	}
	return fmt.Sprintf("Profile(%d)", int(p))
}

// ErrBadProfile is wrapped by ParseProfile's errors.
var ErrBadProfile = errors.New("tpcc: unknown client profile")

// ParseProfile returns the profile named s.
func ParseProfile(s string) (Profile, error) {
	for p, n := range profileNames {
		if n == s {
			return Profile(p), nil
		}
	}
	return 0, fmt.Errorf("%w %q: want one of optimized, sysbench, benchmarksql", ErrBadProfile, s)
}

// ErrUnusedItem is the error of the New-Order whose last item id is unused
// [2.4.2.3]: the transaction has been rolled back, as the specification
// requires, and still counts toward tpmC.
var ErrUnusedItem = errors.New("tpcc: new-order rolled back: item number is not valid")

// Handles are the open tables of a TPC-C database.
type Handles struct {
	Warehouse, District, Customer, History, NewOrder, Orders, OrderLine, Item, Stock *engine.TableHandle
	// WideCustomerKey is the width of CUSTOMER's c_key when the database
	// was loaded with one (0: the specification's key), read from the
	// table's schema.
	WideCustomerKey int
}

// OpenTables opens the nine tables of db.
func OpenTables(db *engine.DB) (*Handles, error) {
	var t Handles
	for _, x := range []struct {
		name string
		h    **engine.TableHandle
	}{{Warehouse, &t.Warehouse}, {District, &t.District}, {Customer, &t.Customer}, {History, &t.History},
		{NewOrder, &t.NewOrder}, {Orders, &t.Orders}, {OrderLine, &t.OrderLine}, {Item, &t.Item}, {Stock, &t.Stock}} {
		h, err := db.Table(x.name)
		if err != nil {
			return nil, fmt.Errorf("tpcc: open table %s: %w", x.name, err)
		}
		*x.h = h
	}
	if s := t.Customer.Schema(); len(s.PrimaryKey) == 4 && s.PrimaryKey[3] == CKey {
		for _, c := range s.Columns {
			if c.Name == CKey {
				t.WideCustomerKey = c.Length
			}
		}
	}
	return &t, nil
}

// customerPK is customer (w, d, id)'s primary key, in the executor's
// buffer: valid until the next call.
func (x *Executor) customerPK(w, d, id int64) []engine.Value {
	x.cpk = [4]engine.Value{engine.Int(w), engine.Int(d), engine.Int(id)}
	pk := x.cpk[:3]
	if k := x.T.WideCustomerKey; k > 0 {
		pk = append(pk, engine.Str(WideCustomerKey(w, d, id, k)))
	}
	return pk
}

// Executor runs the five transactions' database work for given inputs (the
// terminals draw the inputs). It belongs to one goroutine: it reuses its
// row, key and bound buffers, which the engine reads during a call only.
type Executor struct {
	T       *Handles
	Profile Profile
	// StockLevelNoLowerBound scans the district's order lines without the
	// lower bound on ol_o_id (the optimizer bug in the talk): every order
	// line of the district is read and filtered.
	StockLevelNoLowerBound bool
	// DeliveryLimit1 makes BenchmarkSQL's Delivery ask for the oldest new
	// order with LIMIT 1, as the other profiles do (the talk's fix), and
	// changes nothing else of the profile.
	DeliveryLimit1 bool

	row  engine.Row
	ids  []int64
	nums []int64         // Delivery: an order's line numbers
	last []byte          // a by-name lookup's last name
	cpk  [4]engine.Value // customerPK's key
	lo   [3]engine.Value // a scan's lower bound
	hi   [3]engine.Value // a scan's upper bound
	// steps times the steps of a terminal's transactions (nil: the
	// executor of a test or a tool, which times nothing).
	steps *stepClock
}

// step marks the start of step s (see Step).
func (x *Executor) step(s Step) {
	if x.steps != nil {
		x.steps.mark(s)
	}
}

// Columns a by-name lookup reads of each match: the c_id list (every
// profile's Payment, BenchmarkSQL's and the optimized Order-Status), or
// sysbench's Order-Status list, which carries what the transaction shows
// (SELECT c_balance, c_first, c_middle, c_id ... ORDER BY c_first), so
// that it reads no customer row after it.
var (
	byFirst    = [1]engine.SortKey{{Column: "c_first"}}
	byNameIDs  = []string{"c_id"}
	byNameRows = []string{"c_balance", "c_first", "c_middle", "c_id"}
)

// Columns the other scans read.
var (
	orderStatusOrder = []string{"o_id", "o_entry_d", "o_carrier_id"}
	orderStatusLines = []string{"ol_i_id", "ol_supply_w_id", "ol_quantity", "ol_amount", "ol_delivery_d"}
	deliveryNewOrder = []string{"no_o_id"}
	deliveryLines    = []string{"ol_number", "ol_amount"}
	stockLevelLines  = []string{"ol_o_id", "ol_i_id"}
)

// bound3 fills b with up to three values and returns them: a scan bound
// in one of the executor's buffers, which the engine reads during the
// call only.
func bound3(b *[3]engine.Value, vals ...engine.Value) []engine.Value {
	return b[:copy(b[:], vals)]
}

// customerByName finds the customer of a by-name lookup: the one at position
// ceil(n/2) of the matches ordered by c_first [2.5.2.2], as the profile
// phrases it, reading cols of each match. It returns the customer's id.
// The count and the scan are the steps count and scan of the caller's type.
func (x *Executor) customerByName(tx *engine.Tx, w, d int64, last string, cols []string, count, scan Step) (int64, error) {
	x.last = append(x.last[:0], last...)
	prefix := bound3(&x.lo, engine.Int(w), engine.Int(d), engine.Bytes(x.last))
	so := engine.ScanOptions{Index: CustomerByName, Lower: prefix, Upper: prefix, Columns: cols}
	var n int64
	if x.Profile != BenchmarkSQL {
		x.step(count)
	}
	switch x.Profile {
	case Optimized:
		c, _, err := tx.Count(x.T.Customer, engine.CountOptions{ScanOptions: so})
		if err != nil {
			return 0, err
		}
		n = c
	case Sysbench:
		c, _, err := tx.Count(x.T.Customer, engine.CountOptions{ScanOptions: so, Column: "c_id"})
		if err != nil {
			return 0, err
		}
		n = c
	}
	if x.Profile == Optimized {
		if n == 0 {
			return 0, fmt.Errorf("tpcc: no customer named %s in warehouse %d district %d", last, w, d)
		}
		so.Limit = int((n + 1) / 2) // read only up to the chosen row
	}
	x.step(scan)
	// ORDER BY c_first: idx_customer_name (c_w_id, c_d_id, c_last,
	// c_first) gives the order after its three equal columns, so no sort
	// runs (the report's sorts_avoided).
	limit := so.Limit
	so.Limit = 0 // the sort's
	cur, err := tx.Sort(x.T.Customer, engine.SortOptions{ScanOptions: so, OrderBy: byFirst[:], Limit: limit})
	if err != nil {
		return 0, err
	}
	x.ids = x.ids[:0]
	for cur.Next() {
		x.ids = append(x.ids, cur.Row()[CID].I)
	}
	if err := cur.Close(); err != nil {
		return 0, err
	}
	if len(x.ids) == 0 {
		return 0, fmt.Errorf("tpcc: no customer named %s in warehouse %d district %d", last, w, d)
	}
	if x.Profile == Optimized {
		return x.ids[len(x.ids)-1], nil
	}
	return x.ids[(len(x.ids)+1)/2-1], nil // ceil(n/2), 1-based [2.5.2.2]
}

// OrderLineInput is one line of a New-Order.
type OrderLineInput struct {
	IID, SupplyWID, Quantity int64
}

// NewOrderInput is a New-Order's input [2.4.1].
type NewOrderInput struct {
	WID, DID, CID int64
	Lines         []OrderLineInput
	EntryD        time.Time
}

// NewOrderOutput is what a New-Order returns to the terminal [2.4.3.3].
type NewOrderOutput struct {
	OID   int64
	Total int64 // cents
}

func (x *Executor) get(tx *engine.Tx, t *engine.TableHandle, pk ...engine.Value) (engine.Row, error) {
	return x.read(tx, t, false, pk)
}

// getForUpdate reads a row the transaction is about to update, with the
// exclusive lock (SELECT ... FOR UPDATE, as the kits do).
func (x *Executor) getForUpdate(tx *engine.Tx, t *engine.TableHandle, pk ...engine.Value) (engine.Row, error) {
	return x.read(tx, t, true, pk)
}

func (x *Executor) read(tx *engine.Tx, t *engine.TableHandle, update bool, pk []engine.Value) (engine.Row, error) {
	// Direct calls, not a method value, and a copy of pk in the message:
	// pk then stays on the caller's stack.
	var row engine.Row
	var found bool
	var err error
	if update {
		row, found, err = tx.GetForUpdate(t, pk, x.row)
	} else {
		row, found, err = tx.Get(t, pk, x.row)
	}
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("tpcc: table %s has no row %v", t.Name(), slices.Clone(pk))
	}
	x.row = row
	return row, nil
}

// NewOrder runs a New-Order [2.4.2]. An unused item id (the 1% case) rolls
// the transaction back and returns ErrUnusedItem.
//
// As go-tpc and BenchmarkSQL phrase it, the warehouse, the customer and the
// items are plain reads (under ReadCommitted and RepeatableRead, on tables
// with versions, consistent reads that take no lock), and the district and
// each stock row, which it updates from what it read, are read FOR UPDATE.
func (x *Executor) NewOrder(tx *engine.Tx, in *NewOrderInput) (NewOrderOutput, error) {
	var out NewOrderOutput
	i := engine.Int
	x.step(NOWarehouse)
	w, err := x.get(tx, x.T.Warehouse, i(in.WID))
	if err != nil {
		return out, err
	}
	wTax := w[WTax].I
	x.step(NODistrict)
	d, err := x.getForUpdate(tx, x.T.District, i(in.WID), i(in.DID))
	if err != nil {
		return out, err
	}
	dTax, oid := d[DTax].I, d[DNextOID].I
	x.step(NODistrictUpdate)
	if err := tx.Update(x.T.District, []engine.Value{i(in.WID), i(in.DID)}, []engine.Set{{Column: "d_next_o_id", Value: i(oid + 1)}}); err != nil {
		return out, err
	}
	x.step(NOCustomer)
	c, err := x.get(tx, x.T.Customer, x.customerPK(in.WID, in.DID, in.CID)...)
	if err != nil {
		return out, err
	}
	discount := c[CDiscount].I
	allLocal := int64(1)
	for _, l := range in.Lines {
		if l.SupplyWID != in.WID {
			allLocal = 0
		}
	}
	entry := engine.Time(in.EntryD)
	x.step(NOInsertOrder)
	if err := tx.Insert(x.T.Orders, engine.Row{i(oid), i(in.DID), i(in.WID), i(in.CID), entry, engine.Null,
		i(int64(len(in.Lines))), i(allLocal)}); err != nil {
		return out, err
	}
	x.step(NOInsertNewOrder)
	if err := tx.Insert(x.T.NewOrder, engine.Row{i(oid), i(in.DID), i(in.WID)}); err != nil {
		return out, err
	}
	var sum int64
	for n, l := range in.Lines {
		x.step(NOItem)
		item, found, err := tx.Get(x.T.Item, []engine.Value{i(l.IID)}, x.row)
		if err != nil {
			return out, err
		}
		if !found {
			// 2.4.2.3: the unused item rolls the whole transaction back.
			x.step(NORollback)
			if err := tx.Rollback(); err != nil {
				return out, err
			}
			return out, ErrUnusedItem
		}
		x.row = item
		price := item[IPrice].I
		x.step(NOStock)
		s, err := x.getForUpdate(tx, x.T.Stock, i(l.SupplyWID), i(l.IID))
		if err != nil {
			return out, err
		}
		qty := s[SQuantity].I
		if qty-l.Quantity >= 10 {
			qty -= l.Quantity
		} else {
			qty += 91 - l.Quantity
		}
		remote := s[SRemoteCnt].I
		if l.SupplyWID != in.WID {
			remote++
		}
		distInfo := string(s[SDist01+int(in.DID)-1].B)
		x.step(NOStockUpdate)
		if err := tx.Update(x.T.Stock, []engine.Value{i(l.SupplyWID), i(l.IID)}, []engine.Set{
			{Column: "s_quantity", Value: i(qty)}, {Column: "s_ytd", Value: i(s[SYtd].I + l.Quantity)},
			{Column: "s_order_cnt", Value: i(s[SOrderCnt].I + 1)}, {Column: "s_remote_cnt", Value: i(remote)}}); err != nil {
			return out, err
		}
		amount := l.Quantity * price
		sum += amount
		x.step(NOInsertOrderLine)
		if err := tx.Insert(x.T.OrderLine, engine.Row{i(oid), i(in.DID), i(in.WID), i(int64(n + 1)), i(l.IID),
			i(l.SupplyWID), engine.Null, i(l.Quantity), engine.Dec(amount), engine.Str(distInfo)}); err != nil {
			return out, err
		}
	}
	// total = sum × (1 − c_discount) × (1 + w_tax + d_tax), rates of scale 4.
	out.OID = oid
	out.Total = sum * (10000 - discount) / 10000 * (10000 + wTax + dTax) / 10000
	return out, nil
}

// PaymentInput is a Payment's input [2.5.1].
type PaymentInput struct {
	WID, DID   int64 // the terminal's warehouse and the district
	CWID, CDID int64 // the customer's warehouse and district
	CID        int64 // by id when CLast is empty
	CLast      string
	Amount     int64 // cents
	HID        int64 // the history row's surrogate key
	Date       time.Time
}

// Payment runs a Payment [2.5.2]. It returns the customer's id.
//
// The warehouse, the district and the customer, which it updates from what
// it read, are read FOR UPDATE; a by-name lookup is a plain read.
func (x *Executor) Payment(tx *engine.Tx, in *PaymentInput) (int64, error) {
	i := engine.Int
	x.step(PWarehouse)
	w, err := x.getForUpdate(tx, x.T.Warehouse, i(in.WID))
	if err != nil {
		return 0, err
	}
	wName := string(w[WName].B)
	x.step(PWarehouseUpdate)
	if err := tx.Update(x.T.Warehouse, []engine.Value{i(in.WID)}, []engine.Set{{Column: "w_ytd", Value: engine.Dec(w[WYtd].I + in.Amount)}}); err != nil {
		return 0, err
	}
	x.step(PDistrict)
	d, err := x.getForUpdate(tx, x.T.District, i(in.WID), i(in.DID))
	if err != nil {
		return 0, err
	}
	dName := string(d[DName].B)
	x.step(PDistrictUpdate)
	if err := tx.Update(x.T.District, []engine.Value{i(in.WID), i(in.DID)}, []engine.Set{{Column: "d_ytd", Value: engine.Dec(d[DYtd].I + in.Amount)}}); err != nil {
		return 0, err
	}
	cid := in.CID
	if in.CLast != "" {
		if cid, err = x.customerByName(tx, in.CWID, in.CDID, in.CLast, byNameIDs, PByNameCount, PByNameScan); err != nil {
			return 0, err
		}
	}
	x.step(PCustomer)
	c, err := x.getForUpdate(tx, x.T.Customer, x.customerPK(in.CWID, in.CDID, cid)...)
	if err != nil {
		return 0, err
	}
	set := []engine.Set{
		{Column: "c_balance", Value: engine.Dec(c[CBalance].I - in.Amount)},
		{Column: "c_ytd_payment", Value: engine.Dec(c[CYtdPayment].I + in.Amount)},
		{Column: "c_payment_cnt", Value: i(c[CPaymentCnt].I + 1)},
	}
	if string(c[CCredit].B) == "BC" {
		// 2.5.2.2: the payment's ids and amount go in front of C_DATA,
		// which keeps its first 500 characters.
		data := strconv.FormatInt(cid, 10) + " " + strconv.FormatInt(in.CDID, 10) + " " + strconv.FormatInt(in.CWID, 10) + " " +
			strconv.FormatInt(in.DID, 10) + " " + strconv.FormatInt(in.WID, 10) + " " + formatCents(in.Amount) + " " + string(c[CData].B)
		if len(data) > 500 {
			data = data[:500]
		}
		set = append(set, engine.Set{Column: "c_data", Value: engine.Str(data)})
	}
	x.step(PCustomerUpdate)
	if err := tx.Update(x.T.Customer, x.customerPK(in.CWID, in.CDID, cid), set); err != nil {
		return 0, err
	}
	hData := wName + "    " + dName // 2.5.2.2
	x.step(PInsertHistory)
	if err := tx.Insert(x.T.History, engine.Row{i(in.HID), i(cid), i(in.CDID), i(in.CWID), i(in.DID), i(in.WID),
		engine.Time(in.Date), engine.Dec(in.Amount), engine.Str(hData)}); err != nil {
		return 0, err
	}
	return cid, nil
}

func formatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// OrderStatusInput is an Order-Status's input [2.6.1].
type OrderStatusInput struct {
	WID, DID, CID int64 // by id when CLast is empty
	CLast         string
}

// OrderStatusOutput is what an Order-Status shows [2.6.3.3].
type OrderStatusOutput struct {
	CID, OID int64
	Lines    int
}

// OrderStatus runs an Order-Status [2.6.2]: the customer's newest order and
// its lines. Read-only.
func (x *Executor) OrderStatus(tx *engine.Tx, in *OrderStatusInput) (OrderStatusOutput, error) {
	i := engine.Int
	var out OrderStatusOutput
	cid := in.CID
	var err error
	byName := in.CLast != ""
	if byName {
		cols := byNameIDs
		if x.Profile == Sysbench {
			cols = byNameRows
		}
		if cid, err = x.customerByName(tx, in.WID, in.DID, in.CLast, cols, OSByNameCount, OSByNameScan); err != nil {
			return out, err
		}
	}
	if !byName || x.Profile != Sysbench { // sysbench's list carried the customer's columns
		x.step(OSCustomer)
		if _, err := x.get(tx, x.T.Customer, x.customerPK(in.WID, in.DID, cid)...); err != nil {
			return out, err
		}
	}
	out.CID = cid
	prefix := bound3(&x.lo, i(in.WID), i(in.DID), i(cid))
	x.step(OSOrder)
	cur, err := tx.Scan(x.T.Orders, engine.ScanOptions{Index: OrdersByCustomer, Lower: prefix, Upper: prefix,
		Reverse: true, Limit: 1, Columns: orderStatusOrder})
	if err != nil {
		return out, err
	}
	found := cur.Next()
	if found {
		out.OID = cur.Row()[OID].I
	}
	if err := cur.Close(); err != nil || !found {
		return out, err
	}
	op := bound3(&x.lo, i(in.WID), i(in.DID), i(out.OID))
	x.step(OSOrderLines)
	lines, err := tx.Scan(x.T.OrderLine, engine.ScanOptions{Lower: op, Upper: op, Columns: orderStatusLines})
	if err != nil {
		return out, err
	}
	for lines.Next() {
		out.Lines++
	}
	return out, lines.Close()
}

// DeliveryInput is a Delivery's input [2.7.1].
type DeliveryInput struct {
	WID, CarrierID int64
	Date           time.Time
}

// Delivery runs a Delivery [2.7.4] over the ten districts and returns how
// many it skipped for want of an undelivered order.
//
// Under ReadCommitted and RepeatableRead its two scans are locking reads
// (ScanOptions.ForUpdate), as the kits phrase them: the oldest new order
// is go-tpc's SELECT ... FOR UPDATE (two Deliveries then queue for it
// rather than both taking it), and the order's lines, which it updates,
// are read as its UPDATE reads them, the latest committed version (a
// snapshot read could miss the lines of an order committed after the
// snapshot whose new order the locking scan found). Under Serializable
// every read locks, shared, as it always has.
func (x *Executor) Delivery(tx *engine.Tx, in *DeliveryInput) (skipped int, err error) {
	i := engine.Int
	locking := tx.Isolation() != engine.Serializable
	for d := int64(1); d <= 10; d++ {
		prefix := bound3(&x.lo, i(in.WID), i(d))
		so := engine.ScanOptions{Lower: prefix, Upper: prefix, Columns: deliveryNewOrder, ForUpdate: locking}
		if x.Profile != BenchmarkSQL || x.DeliveryLimit1 {
			so.Limit = 1
		}
		x.step(DNewOrder)
		cur, err := tx.Scan(x.T.NewOrder, so)
		if err != nil {
			return skipped, err
		}
		oid, found := int64(0), false
		for cur.Next() {
			if !found {
				oid, found = cur.Row()[NOOID].I, true
			}
		}
		if err := cur.Close(); err != nil {
			return skipped, err
		}
		if !found {
			skipped++ // 2.7.4.2
			continue
		}
		x.step(DDeleteNewOrder)
		if err := tx.Delete(x.T.NewOrder, []engine.Value{i(in.WID), i(d), i(oid)}); err != nil {
			return skipped, err
		}
		x.step(DOrder)
		o, err := x.getForUpdate(tx, x.T.Orders, i(in.WID), i(d), i(oid))
		if err != nil {
			return skipped, err
		}
		cid := o[OCID].I
		x.step(DOrderUpdate)
		if err := tx.Update(x.T.Orders, []engine.Value{i(in.WID), i(d), i(oid)}, []engine.Set{{Column: "o_carrier_id", Value: i(in.CarrierID)}}); err != nil {
			return skipped, err
		}
		op := bound3(&x.lo, i(in.WID), i(d), i(oid))
		x.step(DOrderLines)
		lines, err := tx.Scan(x.T.OrderLine, engine.ScanOptions{Lower: op, Upper: op, Columns: deliveryLines, ForUpdate: locking})
		if err != nil {
			return skipped, err
		}
		var sum int64
		x.nums = x.nums[:0]
		for lines.Next() {
			sum += lines.Row()[OLAmount].I
			x.nums = append(x.nums, lines.Row()[OLNumber].I)
		}
		if err := lines.Close(); err != nil {
			return skipped, err
		}
		for _, n := range x.nums {
			x.step(DOrderLineUpdate)
			if err := tx.Update(x.T.OrderLine, []engine.Value{i(in.WID), i(d), i(oid), i(n)},
				[]engine.Set{{Column: "ol_delivery_d", Value: engine.Time(in.Date)}}); err != nil {
				return skipped, err
			}
		}
		x.step(DCustomer)
		c, err := x.getForUpdate(tx, x.T.Customer, x.customerPK(in.WID, d, cid)...)
		if err != nil {
			return skipped, err
		}
		x.step(DCustomerUpdate)
		if err := tx.Update(x.T.Customer, x.customerPK(in.WID, d, cid), []engine.Set{
			{Column: "c_balance", Value: engine.Dec(c[CBalance].I + sum)},
			{Column: "c_delivery_cnt", Value: i(c[CDeliveryCnt].I + 1)}}); err != nil {
			return skipped, err
		}
	}
	return skipped, nil
}

// StockLevelInput is a Stock-Level's input [2.8.1].
type StockLevelInput struct {
	WID, DID, Threshold int64
}

// StockLevel runs a Stock-Level [2.8.2]: the number of distinct items of
// the district's last 20 orders whose stock is below the threshold.
// Read-only.
func (x *Executor) StockLevel(tx *engine.Tx, in *StockLevelInput) (int, error) {
	i := engine.Int
	x.step(SLDistrict)
	d, err := x.get(tx, x.T.District, i(in.WID), i(in.DID))
	if err != nil {
		return 0, err
	}
	next := d[DNextOID].I
	so := engine.ScanOptions{Lower: bound3(&x.lo, i(in.WID), i(in.DID), i(next-20)),
		Upper: bound3(&x.hi, i(in.WID), i(in.DID), i(next)), UpperExclusive: true,
		Columns: stockLevelLines}
	if x.StockLevelNoLowerBound {
		so.Lower = bound3(&x.lo, i(in.WID), i(in.DID))
	}
	x.step(SLOrderLines)
	cur, err := tx.Scan(x.T.OrderLine, so)
	if err != nil {
		return 0, err
	}
	x.ids = x.ids[:0]
	for cur.Next() {
		if r := cur.Row(); r[OLOID].I >= next-20 {
			x.ids = append(x.ids, r[OLIID].I)
		}
	}
	if err := cur.Close(); err != nil {
		return 0, err
	}
	// Distinct items, in item order: the same page accesses on every run.
	slices.Sort(x.ids)
	low := 0
	for _, item := range slices.Compact(x.ids) {
		x.step(SLStock)
		s, err := x.get(tx, x.T.Stock, i(in.WID), i(item))
		if err != nil {
			return 0, err
		}
		if s[SQuantity].I < in.Threshold {
			low++
		}
	}
	return low, nil
}
