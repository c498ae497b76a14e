// Package tpcc is the TPC-C workload, in process, against the engine: the
// nine tables and their population, the five transactions, terminals and
// the client access profiles, and the consistency checks of clause 3.3.2.
// It follows the specification (revision 5.11; ../shared/TPCC.md in the
// repository's workspace lists the facts it must honour) and cites the
// clause it follows where a popular kit does something else.
package tpcc
