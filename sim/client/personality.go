package client

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrInvalidConfig is wrapped by the errors of a Config or a personality
// name that cannot be used.
var ErrInvalidConfig = errors.New("client: invalid configuration")

// Protocol is the wire protocol family a personality speaks.
type Protocol uint8

const (
	MySQL      Protocol = iota // MySQL client/server protocol (MariaDB's too)
	PostgreSQL                 // PostgreSQL frontend/backend protocol v3
)

// Personality is a client driver, pinned to one version, and how it puts
// statements on the wire.
type Personality struct {
	Name     string
	Driver   string // the driver and the version its behaviour is read from
	Protocol Protocol
	// HeaderRead says the driver reads each packet's length prefix with a
	// system call of its own, then the payload with another
	// (Connector/J's SimplePacketReader: readFully of the 4-byte header,
	// then of the payload); otherwise one read takes a whole response
	// from the socket into the driver's buffer.
	HeaderRead bool
	// ReadBuffer is the driver's socket read buffer in bytes: a response
	// larger than it takes more than one read (pgjdbc's
	// VisibleBufferedInputStream: 8192; MariaDB Connector/J's: 16384).
	ReadBuffer int
	// Batching is how the driver sends an executeBatch.
	Batching Batching
	// Defaults are the driver's defaults, as a kit that sets nothing
	// gets them.
	Defaults Settings
	Source   string
}

// Batching is how a driver sends an executeBatch.
type Batching uint8

const (
	// BatchOneByOne: one executeUpdate after another, unless
	// rewriteBatchedStatements (Connector/J).
	BatchOneByOne Batching = iota
	// BatchPipelined: every statement written, then every result read,
	// or with useBulkStmts one COM_STMT_BULK_EXECUTE (MariaDB
	// Connector/J).
	BatchPipelined
	// BatchOneSync: every Bind/Execute before one Sync (pgjdbc).
	BatchOneSync
)

// Settings are the driver and server settings a terminal runs with.
type Settings struct {
	// ServerPrepare: server-side prepared statements (Connector/J's
	// useServerPrepStmts, default false; MariaDB Connector/J's
	// useServerPrepStmts, default false in 3.x; pgjdbc's prepareThreshold,
	// default 5: a PreparedStatement is server-prepared from its
	// PrepareThreshold-th execution, unnamed Parse each time before).
	ServerPrepare bool
	// PrepareThreshold is pgjdbc's prepareThreshold (used with
	// ServerPrepare; 0 with ServerPrepare means 1).
	PrepareThreshold int
	// PlanCache: the server reuses a prepared statement's plan (a
	// session plan cache: PostgreSQL's generic plan, plan_cache_mode
	// auto; MySQL has none, the talk's server had one added). Without it
	// every execution is planned.
	PlanCache bool
	// FetchSize is the JDBC fetch size (0: all rows). Connector/J honours
	// it only with CursorFetch; pgjdbc only with autocommit off, which
	// BenchmarkSQL sets; MariaDB Connector/J streams without changing
	// what crosses the wire.
	FetchSize int
	// CursorFetch is Connector/J's useCursorFetch: with a fetch size, a
	// SELECT opens a server cursor (its result materialized in a
	// temporary table) and its rows come with COM_STMT_FETCH. It forces
	// server-side prepared statements.
	CursorFetch bool
	// Batch: the kit sends its batched statements with executeBatch (as
	// BenchmarkSQL's New-Order does); without it, one executeUpdate
	// each.
	Batch bool
	// RewriteBatched is Connector/J's rewriteBatchedStatements (default
	// false): an INSERT batch becomes one multi-row INSERT, another batch
	// of more than three statements one multi-statement query.
	RewriteBatched bool
	// BulkStmts is MariaDB Connector/J's useBulkStmts (off by default
	// since 3.2.0): a batch is one COM_STMT_BULK_EXECUTE when the server
	// advertises it. Without it the connector pipelines the batch: every
	// statement is sent, then every result read, one round trip.
	BulkStmts bool
	// CClient says the kit is a C client (sysbench, tpcc-mysql, pgbench:
	// libmysqlclient or libpq): one read a response, no JDBC driver CPU.
	CClient bool
}

// Personalities by name.
var Personalities = map[string]Personality{
	"mysql-jdbc": {Name: "mysql-jdbc", Driver: "MySQL Connector/J 8.0.33", Protocol: MySQL, HeaderRead: true, Batching: BatchOneByOne,
		Source: "Connector/J 8.0.33 reference (configuration properties: useServerPrepStmts=false, useCursorFetch=false, rewriteBatchedStatements=false, defaultFetchSize=0); com.mysql.cj.protocol.a.SimplePacketReader reads the 4-byte header, then the payload"},
	"mariadb-connector": {Name: "mariadb-connector", Driver: "MariaDB Connector/J 3.3.3", Protocol: MySQL, ReadBuffer: 16384, Batching: BatchPipelined,
		Source: "MariaDB Connector/J 3.x documentation: useServerPrepStmts=false, useBulkStmts=false since 3.2.0, batches pipelined (disablePipeline=false); the packet reader fills a 16 KiB buffer"},
	"pgjdbc": {Name: "pgjdbc", Driver: "PostgreSQL JDBC 42.7.3", Protocol: PostgreSQL, ReadBuffer: 8192, Batching: BatchOneSync,
		Defaults: Settings{ServerPrepare: true, PrepareThreshold: 5, PlanCache: true},
		Source:   "pgjdbc 42.7 documentation: prepareThreshold=5, defaultRowFetchSize=0 (a fetch size is honoured only with autocommit off), executeBatch sends every Bind/Execute before one Sync; VisibleBufferedInputStream of 8192 bytes; PostgreSQL's plan_cache_mode=auto (generic plan after five custom ones)"},
}

// PersonalityNames lists the personalities' names, sorted.
func PersonalityNames() []string {
	var n []string
	for k := range Personalities {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// Lookup returns the personality named name; an unknown name is an error
// wrapping ErrInvalidConfig.
func Lookup(name string) (Personality, error) {
	p, ok := Personalities[name]
	if !ok {
		return Personality{}, fmt.Errorf("%w: personality %q: want one of %s", ErrInvalidConfig, name, strings.Join(PersonalityNames(), ", "))
	}
	return p, nil
}

// Counts are what crosses between client and server: per statement, per
// transaction or per run.
type Counts struct {
	Statements int64 `json:"statements"`
	RoundTrips int64 `json:"round_trips"`
	// MessagesSent are protocol messages the client sends (MySQL packets,
	// PostgreSQL messages); MessagesReceived, the server's.
	MessagesSent     int64 `json:"messages_sent"`
	MessagesReceived int64 `json:"messages_received"`
	// ClientSyscalls are the client's send and read system calls;
	// ServerSyscalls the server's (one read a request flush, one write a
	// response flush).
	ClientSyscalls int64 `json:"client_syscalls"`
	ServerSyscalls int64 `json:"server_syscalls"`
	BytesSent      int64 `json:"bytes_sent"`
	BytesReceived  int64 `json:"bytes_received"`
	// RowsSent are result rows on the wire; RowsMaterialized rows a
	// server cursor wrote to its temporary table.
	RowsSent         int64 `json:"rows_sent"`
	RowsMaterialized int64 `json:"rows_materialized,omitempty"`
	// Parses and Plans are the server's; PlanCacheHits the executions
	// that reused a plan; Prepares the statements prepared.
	Parses        int64 `json:"parses"`
	Plans         int64 `json:"plans"`
	PlanCacheHits int64 `json:"plan_cache_hits"`
	Prepares      int64 `json:"prepares"`
	Cursors       int64 `json:"cursors,omitempty"`
}

// Add adds o to c.
func (c *Counts) Add(o *Counts) {
	c.Statements += o.Statements
	c.RoundTrips += o.RoundTrips
	c.MessagesSent += o.MessagesSent
	c.MessagesReceived += o.MessagesReceived
	c.ClientSyscalls += o.ClientSyscalls
	c.ServerSyscalls += o.ServerSyscalls
	c.BytesSent += o.BytesSent
	c.BytesReceived += o.BytesReceived
	c.RowsSent += o.RowsSent
	c.RowsMaterialized += o.RowsMaterialized
	c.Parses += o.Parses
	c.Plans += o.Plans
	c.PlanCacheHits += o.PlanCacheHits
	c.Prepares += o.Prepares
	c.Cursors += o.Cursors
}
