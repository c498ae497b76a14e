package client

// Wire sizes. MySQL: a 4-byte packet header (3 bytes length, 1 sequence).
// PostgreSQL: a message is a type byte and a 4-byte length. The other
// sizes are this model's estimates of the variable parts.
const (
	mysqlHeader = 4
	// mysqlColumnDef is a column definition packet's payload (catalog,
	// schema, table, original table, name, original name, fixed fields):
	// about 48 bytes for these tables' short names.
	mysqlColumnDef = 48
	mysqlOK        = 7  // an OK (or EOF-as-OK) payload without info
	mysqlEOF       = 5  // a classic EOF payload (the cursor's open)
	paramText      = 6  // a parameter's value as text, in place of its '?'
	paramBinary    = 8  // a parameter's binary value
	tupleExtra     = 4  // "(", ")", ", " around a multi-row INSERT's values
	pgHeader       = 5  // type byte and length
	pgColumnDesc   = 29 // a RowDescription field: a 10-byte name, its NUL, 18 bytes of fixed fields
	pgCommandTag   = 12 // CommandComplete's tag ("UPDATE 1", "SELECT 10") with its NUL
	pgStmtName     = 4  // "S_1" and its NUL; a portal's "C_1" likewise
	mysqlNetBuffer = 16384
)

// Session counts one connection's statements as a personality sends them
// with its settings: it remembers which statements it has prepared and
// how often each ran, and holds the batch the kit has not sent yet.
type Session struct {
	P Personality
	S Settings
	// execs is each statement's executions so far on this connection.
	execs map[int]int
	batch []batched
}

type batched struct {
	st *Statement
	n  int
}

// NewSession returns a session of p with settings s. Connector/J's
// useCursorFetch forces server-side prepared statements.
func NewSession(p Personality, s Settings) *Session {
	if s.CursorFetch && p.Protocol == MySQL {
		s.ServerPrepare = true
	}
	if s.CClient {
		p.HeaderRead, p.ReadBuffer = false, mysqlNetBuffer
		if p.Protocol == PostgreSQL {
			p.ReadBuffer = 8192 // libpq's initial input buffer
		}
	}
	return &Session{P: p, S: s, execs: map[int]int{}}
}

// Exec counts one execution of st that produced rows rows on the server
// (the engine's). A batched statement under Settings.Batch is held until
// the commit (Flush) and counts nothing now; a commit flushes the batch
// first, a rollback drops it (the kit rolls back before executeBatch).
func (s *Session) Exec(st *Statement, rows int) Counts {
	var c Counts
	switch {
	case st.Batched && s.S.Batch:
		// One batch per PreparedStatement (addBatch on each object in the
		// loop, executeBatch on each after it).
		for i := range s.batch {
			if s.batch[i].st.ID == st.ID {
				s.batch[i].n++
				return c
			}
		}
		s.batch = append(s.batch, batched{st, 1})
		return c
	case st.Kind == Commit:
		c = s.Flush()
	case st.Kind == Rollback:
		s.batch = s.batch[:0]
	}
	one := s.exec(st, rows)
	c.Add(&one)
	return c
}

// Flush sends the batches held, one executeBatch per statement, in the
// order the kit first added to them, and returns their counts.
func (s *Session) Flush() Counts {
	var c Counts
	for _, b := range s.batch {
		one := s.execBatch(b.st, b.n)
		c.Add(&one)
	}
	s.batch = s.batch[:0]
	return c
}

// prepared says whether this execution of st runs a server-prepared
// statement, and whether it must prepare it first; it counts the
// execution.
func (s *Session) prepared(st *Statement) (use, prepareNow bool) {
	s.execs[st.ID]++
	n := s.execs[st.ID]
	if !s.S.ServerPrepare || st.Kind == Commit || st.Kind == Rollback {
		return false, false
	}
	if s.P.Protocol == PostgreSQL {
		th := max(s.S.PrepareThreshold, 1)
		return n >= th, n == th
	}
	return true, n == 1
}

// plan counts the server's parse and plan work of one execution.
func (s *Session) plan(c *Counts, st *Statement, use, prepareNow bool) {
	if st.Kind == Commit || st.Kind == Rollback {
		c.Parses++
		return
	}
	if !use || prepareNow {
		c.Parses++
	}
	if use && s.S.PlanCache && !prepareNow {
		c.PlanCacheHits++
	} else {
		c.Plans++
	}
}

// exec counts one statement sent on its own.
func (s *Session) exec(st *Statement, rows int) Counts {
	if st.Rows > 0 {
		rows = st.Rows
	}
	if st.Kind != Select {
		rows = 0
	}
	var c Counts
	c.Statements = 1
	use, prep := s.prepared(st)
	s.plan(&c, st, use, prep)
	if prep {
		c.Prepares++
	}
	if s.P.Protocol == MySQL {
		s.mysqlExec(&c, st, rows, use, prep)
	} else {
		s.pgExec(&c, st, rows, use, prep)
	}
	return c
}

// rt counts one round trip: req bytes in reqMsgs messages flushed with
// one write, resp bytes in respMsgs messages, serverWrites flushes.
func (s *Session) rt(c *Counts, req, reqMsgs, resp, respMsgs, serverWrites int64) {
	c.RoundTrips++
	c.MessagesSent += reqMsgs
	c.MessagesReceived += respMsgs
	c.BytesSent += req
	c.BytesReceived += resp
	if s.P.Protocol == MySQL {
		c.ClientSyscalls += reqMsgs // Connector/J and MariaDB write and flush each packet
	} else {
		c.ClientSyscalls++ // pgjdbc flushes at the Sync
	}
	if s.P.HeaderRead {
		c.ClientSyscalls += 2 * respMsgs
	} else {
		c.ClientSyscalls += ceilDiv(resp, int64(s.P.ReadBuffer))
	}
	c.ServerSyscalls += 1 + serverWrites
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 1
	}
	return (a + b - 1) / b
}

func mysqlPacket(payload int64) int64 { return mysqlHeader + payload }

// mysqlExec: COM_QUERY (text) or COM_STMT_PREPARE and COM_STMT_EXECUTE
// (binary), or with a cursor COM_STMT_EXECUTE and COM_STMT_FETCH.
func (s *Session) mysqlExec(c *Counts, st *Statement, rows int, use, prep bool) {
	P, C, R := int64(st.Params), int64(st.Columns), int64(rows)
	colDefs := C * mysqlPacket(mysqlColumnDef)
	if prep {
		// COM_STMT_PREPARE; its OK, then a definition per parameter and
		// per column (CLIENT_DEPRECATE_EOF: no EOF packets).
		s.rt(c, mysqlPacket(1+int64(len(st.SQL))), 1, mysqlPacket(12)+P*mysqlPacket(mysqlColumnDef)+colDefs, 1+P+C, 1)
	}
	var req int64
	if use {
		req = mysqlPacket(1 + 4 + 1 + 4)
		if P > 0 {
			req += (P+7)/8 + 1 + 2*P + paramBinary*P
		}
	} else {
		req = mysqlPacket(1 + int64(len(st.SQL)) + P*(paramText-1))
	}
	if st.Kind != Select {
		s.rt(c, req, 1, mysqlPacket(mysqlOK), 1, 1)
		return
	}
	rowBytes := int64(st.RowBytes)
	if use {
		rowBytes += 1 + (C+7+2)/8 // binary row: header byte and NULL bitmap
	}
	if use && s.S.CursorFetch && s.S.FetchSize > 0 {
		// The cursor opens: the columns and an EOF with CURSOR_EXISTS; the
		// whole result goes into a temporary table.
		c.Cursors++
		c.RowsMaterialized += R
		s.rt(c, req, 1, mysqlPacket(1)+colDefs+mysqlPacket(mysqlEOF), 2+C, 1)
		fs := int64(s.S.FetchSize)
		left := R
		for {
			n := min(left, fs)
			resp := n*mysqlPacket(rowBytes) + mysqlPacket(mysqlOK)
			s.rt(c, mysqlPacket(1+4+4), 1, resp, n+1, ceilDiv(resp, mysqlNetBuffer))
			c.RowsSent += n
			left -= n
			// A fetch that returned fewer rows than asked ended the
			// cursor; one that filled its quota cannot tell, and the
			// client fetches again. A kit that reads the first row only
			// fetches once.
			if n < fs || st.FirstRowOnly {
				break
			}
		}
		return
	}
	resp := mysqlPacket(1) + colDefs + R*mysqlPacket(rowBytes) + mysqlPacket(mysqlOK)
	s.rt(c, req, 1, resp, 2+C+R, ceilDiv(resp, mysqlNetBuffer))
	c.RowsSent += R
}

func pgMsg(body int64) int64 { return pgHeader + body }

// pgExec: the extended protocol as pgjdbc drives it. An unnamed statement:
// Parse, Bind, Describe (portal), Execute, Sync. A named one the first
// time: Parse, Describe (statement), Bind, Execute, Sync; after: Bind,
// Execute, Sync. A commit: Parse/Bind/Execute/Sync of "COMMIT" (unnamed,
// no Describe). With a fetch size (autocommit off), Execute asks for that
// many rows and each further batch is Execute and Sync.
func (s *Session) pgExec(c *Counts, st *Statement, rows int, use, prep bool) {
	P, C, R := int64(st.Params), int64(st.Columns), int64(rows)
	name := int64(1)
	if use {
		name = pgStmtName
	}
	fs := int64(s.S.FetchSize)
	if st.Kind != Select {
		fs = 0
	}
	portal := int64(1)
	if fs > 0 {
		portal = pgStmtName
	}
	parse := pgMsg(name + int64(len(st.SQL)) + 1 + 2 + 4*P)
	bind := pgMsg(portal + name + 2 + 2*P + 2 + (4+paramBinary)*P + 2)
	execute := pgMsg(portal + 4)
	sync := pgMsg(0)
	describe := pgMsg(1 + portal)
	req, msgs := bind+execute+sync, int64(3)
	resp, rmsgs := pgMsg(0)+pgMsg(pgCommandTag)+pgMsg(1), int64(3) // BindComplete, CommandComplete, ReadyForQuery
	desc := pgMsg(2)                                               // NoData
	if st.Kind == Select {
		desc = pgMsg(2 + C*pgColumnDesc) // RowDescription
	}
	switch {
	case st.Kind == Commit || st.Kind == Rollback:
		req, msgs = req+parse, msgs+1
		resp, rmsgs = resp+pgMsg(0), rmsgs+1 // ParseComplete
	case !use:
		req, msgs = req+parse+describe, msgs+2
		resp, rmsgs = resp+pgMsg(0)+desc, rmsgs+2
	case prep:
		req, msgs = req+parse+pgMsg(1+name), msgs+2
		resp, rmsgs = resp+pgMsg(0)+pgMsg(2+4*P)+desc, rmsgs+3 // ParseComplete, ParameterDescription, Row/NoData
	}
	row := pgMsg(2 + 4*C + int64(st.RowBytes))
	first := R
	if fs > 0 {
		first = min(R, fs)
	}
	resp += first * row
	rmsgs += first
	c.RowsSent += first
	if fs > 0 && R >= fs {
		// PortalSuspended instead of CommandComplete.
		resp += pgMsg(0) - pgMsg(pgCommandTag)
	}
	s.rt(c, req, msgs, resp, rmsgs, ceilDiv(resp, 8192))
	if fs == 0 || st.FirstRowOnly {
		return
	}
	for left := R - first; ; {
		if first < fs {
			return
		}
		n := min(left, fs)
		r := n*row + pgMsg(1)
		if n == fs {
			r += pgMsg(0) // PortalSuspended
		} else {
			r += pgMsg(pgCommandTag)
		}
		s.rt(c, execute+sync, 2, r, n+2, ceilDiv(r, 8192))
		c.RowsSent += n
		left -= n
		first = n
	}
}

// execBatch counts an executeBatch of n executions of st.
func (s *Session) execBatch(st *Statement, n int) Counts {
	var c Counts
	N := int64(n)
	switch {
	case s.P.Batching == BatchOneByOne && s.S.RewriteBatched && (st.Insert || n > 3):
		// One COM_QUERY: a multi-row INSERT, or the statements joined
		// with ';' as a multi-statement query (text either way, each
		// statement parsed and planned).
		c.Statements = N
		for range n {
			s.execs[st.ID]++
		}
		text := int64(len(st.SQL)) + int64(st.Params)*(paramText-1)
		if st.Insert {
			c.Parses, c.Plans = 1, 1
			values := int64(st.Params)*paramText + tupleExtra
			s.rt(&c, mysqlPacket(1+text+(N-1)*values), 1, mysqlPacket(mysqlOK), 1, 1)
			return c
		}
		c.Parses, c.Plans = N, N
		s.rt(&c, mysqlPacket(1+N*text+(N-1)), 1, N*mysqlPacket(mysqlOK), N, N)
		return c
	case s.P.Batching == BatchPipelined:
		if s.S.BulkStmts {
			// COM_STMT_BULK_EXECUTE of a prepared statement (prepared
			// first if need be): one message, one OK.
			c.Statements = N
			for range n {
				s.execs[st.ID]++
			}
			if s.execs[st.ID] == n {
				c.Prepares++
				c.Parses++
				s.rt(&c, mysqlPacket(1+int64(len(st.SQL))), 1, mysqlPacket(12)+int64(st.Params)*mysqlPacket(mysqlColumnDef), 1+int64(st.Params), 1)
			}
			c.Plans += N
			s.rt(&c, mysqlPacket(1+4+2+2*int64(st.Params)+N*int64(st.Params)*(1+paramBinary)), 1, mysqlPacket(mysqlOK), 1, 1)
			return c
		}
		// Pipelined: every statement written, then every result read.
		return s.pipelined(st, n)
	case s.P.Batching == BatchOneSync:
		return s.pipelined(st, n)
	}
	// Connector/J without the rewrite: one executeUpdate after another.
	for range n {
		one := s.exec(st, 0)
		c.Add(&one)
	}
	return c
}

// pipelined counts n executions sent in one flush and answered in one
// (MariaDB Connector/J's pipelined batch, pgjdbc's batch before one
// Sync): the messages of n statements, one round trip.
func (s *Session) pipelined(st *Statement, n int) Counts {
	var c Counts
	for range n {
		one := s.exec(st, 0)
		c.Add(&one)
	}
	// The same messages and bytes in one round trip: one client write
	// (pgjdbc sends a single Sync: n-1 fewer), the reads of one response.
	rts := c.RoundTrips
	c.RoundTrips = 1
	c.ClientSyscalls = 1
	if s.P.Protocol == PostgreSQL {
		sync := pgMsg(0)
		c.MessagesSent -= rts - 1
		c.BytesSent -= (rts - 1) * sync
		c.MessagesReceived -= rts - 1 // ReadyForQuery
		c.BytesReceived -= (rts - 1) * pgMsg(1)
	}
	if s.P.HeaderRead {
		c.ClientSyscalls += 2 * c.MessagesReceived
	} else {
		c.ClientSyscalls += ceilDiv(c.BytesReceived, int64(s.P.ReadBuffer))
	}
	// The server reads the pipeline at once and flushes each result
	// (MySQL) or once at the Sync (PostgreSQL).
	if s.P.Protocol == PostgreSQL {
		c.ServerSyscalls = 1 + ceilDiv(c.BytesReceived, 8192)
	} else {
		c.ServerSyscalls = 1 + rts
	}
	return c
}
