package hw

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/enginelab/enginelab/tpcc"
)

// The cost models of simulated mode: what a metered event costs on a
// modeled CPU, and what a page costs on a modeled device or network. The
// numbers of the shipped profiles and where they come from are in the
// README ("Simulated mode").
//
// Every price is an integer number of nanoseconds (CPU costs are kept in
// picoseconds and summed before they are rounded), so that a simulated
// run gives the same times on every machine: no floating point decides a
// result.

// ErrUnknownProfile means a device, network or CPU profile name is not
// known (neither shipped nor in the profiles file).
var ErrUnknownProfile = errors.New("sim: unknown profile")

// ErrInvalidConfig is wrapped by the errors of a profile or a Spec that
// cannot run: a bad value, a profiles file that cannot be read. It is
// tpcc.ErrInvalidConfig, the same value as sim.ErrInvalidConfig.
var ErrInvalidConfig = tpcc.ErrInvalidConfig

// Device is a modeled block device: the store's, or the log's.
//
// A request of b bytes that starts at time s (when the device is free to
// take it) completes at s + latency + b/bandwidth, and keeps the device
// from starting another request until s + 1/IOPS + b/bandwidth. A
// rotational disk, which serves one request at a time, has IOPS =
// 1/latency, so its requests never overlap; a solid-state device takes
// requests faster than each one completes, so they overlap (its queue
// depth is latency × IOPS).
type Device struct {
	// ReadLatency and WriteLatency are a request's time on an idle
	// device, transfer excluded: seek and rotation on a disk.
	ReadLatency  Duration `json:"read_latency"`
	WriteLatency Duration `json:"write_latency"`
	// SyncLatency is what a cache flush costs: an fsync of the log on
	// the log's device; of the store (a checkpoint's, a doublewrite
	// batch's after its in-place writes) or of the doublewrite file on
	// the store's.
	SyncLatency Duration `json:"sync_latency"`
	// IOPS is how many requests a second the device starts; 0: no limit.
	IOPS int64 `json:"iops"`
	// ReadBandwidth and WriteBandwidth are bytes a second.
	ReadBandwidth  int64 `json:"read_bandwidth"`
	WriteBandwidth int64 `json:"write_bandwidth"`
	// Source says where the numbers come from.
	Source string `json:"source,omitempty"`
}

// Network is a modeled link to the remote page tier. A request that
// carries b bytes (a page to or from the tier) takes the round trip plus
// b/bandwidth, and holds the link for b/bandwidth.
type Network struct {
	// RoundTrip is one request-response on an idle link, the server's
	// time included (a memcached get of a small item).
	RoundTrip Duration `json:"round_trip"`
	// Bandwidth is bytes a second, each way.
	Bandwidth int64 `json:"bandwidth"`
	// ServerRequest is the time a request holds one of the tier server's
	// worker threads (memcached's -t; the tier says how many,
	// sched.Scheduler.SetTierServer): inside RoundTrip on an idle server,
	// a queue when the server's threads are busy. 0: the server is not a
	// resource (the threads are never busy).
	ServerRequest Duration `json:"server_request,omitempty"`
	Source        string   `json:"source,omitempty"`
}

// CPUProfile is the CPU cost of each metered event, in nanoseconds
// (fractions allowed). The events are the engine's meters
// (engine.Meter); each is priced once per occurrence.
type CPUProfile struct {
	// Buffer pool (the "buffer pool" share of the breakdown): a page
	// request served from a frame, and the extra work of a miss (taking a
	// frame, verifying the checksum) or of a new page.
	PageRequest float64 `json:"page_request"`
	PoolMiss    float64 `json:"pool_miss"`
	PageCreate  float64 `json:"page_create"`
	// The engine (the "cpu" share).
	NodeVisit         float64 `json:"node_visit"`
	Split             float64 `json:"split"`
	Merge             float64 `json:"merge"`
	HeapFetch         float64 `json:"heap_fetch"`
	HeapRowScanned    float64 `json:"heap_row_scanned"`
	HeapMove          float64 `json:"heap_move"`
	RowExamined       float64 `json:"row_examined"`
	RowDecoded        float64 `json:"row_decoded"`
	RowReturned       float64 `json:"row_returned"`
	IndexEntryWritten float64 `json:"index_entry_written"`
	IndexEntryDeleted float64 `json:"index_entry_deleted"`
	LogRecord         float64 `json:"log_record"`
	LogByte           float64 `json:"log_byte"`
	LockRequest       float64 `json:"lock_request"`
	Commit            float64 `json:"commit"`
	Rollback          float64 `json:"rollback"`
	// The I/O paths' own CPU (system calls, copies, the client library):
	// charged to the store and the remote tier shares with their devices.
	StoreRequest float64 `json:"store_request"`
	TierRequest  float64 `json:"tier_request"`
	Source       string  `json:"source,omitempty"`
}

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("4.16ms") or a number of nanoseconds.
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration %s: want a string such as \"4ms\" or nanoseconds", b)
	}
	*d = Duration(n)
	return nil
}

// Shipped profiles. The README's table gives each number's source.
var (
	// Devices by name.
	Devices = map[string]Device{
		// A 7200 rpm SATA disk of 2009: seek plus half a revolution a
		// request, one at a time; no write cache trusted, so a flush waits
		// about one revolution.
		"disk-2009": {ReadLatency: Duration(12660 * time.Microsecond), WriteLatency: Duration(12660 * time.Microsecond),
			SyncLatency: Duration(8330 * time.Microsecond), IOPS: 79, ReadBandwidth: 108e6, WriteBandwidth: 108e6,
			Source: "Seagate Barracuda XT/7200.12 (2009): 4.16 ms average latency, 8.5 ms average seek (Seagate's usual figure), 108 MB/s average sustained read (Maximum PC review); flush = one revolution at 7200 rpm (Greg Smith, PostgreSQL 9.0 High Performance)"},
		// A consumer SATA solid-state disk.
		"sata-ssd": {ReadLatency: Duration(77 * time.Microsecond), WriteLatency: Duration(30 * time.Microsecond),
			SyncLatency: Duration(1 * time.Millisecond), IOPS: 98000, ReadBandwidth: 560e6, WriteBandwidth: 530e6,
			Source: "Samsung 870 EVO: 560/530 MB/s, 98K random-read IOPS at QD32, 13K at QD1 (77 µs); write latency and the 1 ms flush (no power-loss protection) are estimates"},
		// A consumer NVMe solid-state disk.
		"nvme-ssd": {ReadLatency: Duration(53 * time.Microsecond), WriteLatency: Duration(20 * time.Microsecond),
			SyncLatency: Duration(891 * time.Microsecond), IOPS: 600000, ReadBandwidth: 3500e6, WriteBandwidth: 3300e6,
			Source: "Samsung 970 EVO Plus 1 TB: 3,500/3,300 MB/s, 600K random-read IOPS at QD32, 19K at QD1 (53 µs); flush 891 µs as measured on a consumer NVMe drive without power-loss protection (Mark Callaghan, 2026); write latency an estimate"},
		// A data-center NVMe disk with power-loss protection: a flush
		// returns once the write is in protected cache.
		"nvme-plp": {ReadLatency: Duration(85 * time.Microsecond), WriteLatency: Duration(20 * time.Microsecond),
			SyncLatency: Duration(30 * time.Microsecond), IOPS: 645000, ReadBandwidth: 3200e6, WriteBandwidth: 2000e6,
			Source: "Intel DC P4500 (Lenovo product guide): 85 µs random read, 645K IOPS, 3.2 GB/s read; flush 12-58 µs on power-loss-protected drives (Mark Callaghan, 2026); write figures are estimates"},
		// Waffle Grid's disks (2009): two 10,000 rpm disks striped.
		// A 16 KiB page is one request on one disk (a stripe unit is
		// larger), so a request's latency is one disk's; two requests
		// run at once, one on each disk, so the pair starts twice one
		// disk's requests a second, and streams at twice its bandwidth.
		"disk-10k-x2-2009": {ReadLatency: Duration(7200 * time.Microsecond), WriteLatency: Duration(7200 * time.Microsecond),
			SyncLatency: Duration(6 * time.Millisecond), IOPS: 278, ReadBandwidth: 240e6, WriteBandwidth: 240e6,
			Source: "Waffle Grid's DBT2 server: two striped 10K RPM disks (bigdbahead.com, 2009); per disk the WD VelociRaptor WD3000HLFS (2008) data sheet: 4.2 ms average read seek, 3.0 ms average latency (half a revolution at 10,000 rpm), 120 MB/s sustained; 139 requests a second a disk (1/7.2 ms), two disks 278; flush = one revolution (6 ms)"},
		// Memory: a page copy.
		"ram": {ReadLatency: Duration(100 * time.Nanosecond), WriteLatency: Duration(100 * time.Nanosecond),
			SyncLatency: 0, IOPS: 0, ReadBandwidth: 10e9, WriteBandwidth: 10e9,
			Source: "main memory reference 100 ns (Dean and Norvig's latency table); 6-11.5 GB/s memcpy per core on Xeons (John McCalpin)"},
	}
	// Networks by name.
	Networks = map[string]Network{
		"gigabit": {RoundTrip: Duration(100 * time.Microsecond), Bandwidth: 117e6,
			Source: "memcached get over 1 Gb/s Ethernet without a router: 85-104 µs over TCP (RAMCloud wiki, RPC performance numbers); 121 MB/s of frames at most, about 117 MB/s of TCP payload (estimate)"},
		// Waffle Grid's link to memcached, and memcached's time a
		// request.
		"gigabit-2009": {RoundTrip: Duration(175 * time.Microsecond), Bandwidth: 117e6, ServerRequest: Duration(20 * time.Microsecond),
			Source: "Waffle Grid's gigabit Ethernet: 0.15-0.20 ms a round trip, as its authors measured it (bigdbahead.com, 2008-2009; the midpoint 0.175 ms); 117 MB/s of TCP payload as gigabit; memcached's time a request: stock Linux and memcached served 50,000 requests a second a server (Paul Saab, \"Scaling memcached at Facebook\", Facebook Engineering, 2008-12-12), 20 µs a request of a worker thread"},
		"10-gigabit": {RoundTrip: Duration(30 * time.Microsecond), Bandwidth: 1170e6,
			Source: "30 µs round trip on tuned 10 Gb/s Ethernet (Cloudflare, 2015), taken for a memcached get (estimate); about 1.17 GB/s of payload (estimate, 99% of the link)"},
	}
	// CPUs by name.
	CPUs = map[string]CPUProfile{
		"default": DefaultCPU,
	}
)

// DefaultCPU is the shipped CPU profile: hand-set so that a simulated run
// on the "ram" device comes near what the engine measures in real mode on
// one core of a current x86 machine (README, "Simulated mode"). The
// calibration command fits one for the machine at hand.
var DefaultCPU = CPUProfile{
	PageRequest: 100, PoolMiss: 1500, PageCreate: 500,
	NodeVisit: 150, Split: 6000, Merge: 6000,
	HeapFetch: 300, HeapRowScanned: 150, HeapMove: 1500,
	RowExamined: 300, RowDecoded: 100, RowReturned: 100,
	IndexEntryWritten: 1400, IndexEntryDeleted: 1200,
	LogRecord: 3000, LogByte: 0.3, LockRequest: 300,
	Commit: 15000, Rollback: 15000,
	StoreRequest: 2000, TierRequest: 1500,
	Source: "hand-fitted to one real-mode terminal's median latencies per transaction type on a 2-core x86 VM (2026)",
}

// Machine is the modeled machine of a simulated run: a Spec's names
// resolved to their profiles.
type Machine struct {
	Cores       int        `json:"cores"`
	CPUName     string     `json:"cpu"`
	CPU         CPUProfile `json:"cpu_profile"`
	StoreName   string     `json:"store_device"`
	Store       Device     `json:"store"`
	LogName     string     `json:"log_device"`
	Log         Device     `json:"log"`
	NetworkName string     `json:"network"`
	Network     Network    `json:"network_profile"`
}

// Spec names the profiles of a simulated run (the command's --cores,
// --cpu, --store-device, --log-device, --network and --profiles); empty
// names take the defaults. ProfilesFile, if not empty, is a JSON file of
// profiles (ProfilesFile's form) that add to or replace the shipped ones.
type Spec struct {
	Cores        int
	CPU          string
	Store, Log   string
	Network      string
	ProfilesFile string
}

// Defaults of a simulated run's hardware.
const (
	DefaultCores   = 4
	DefaultCPUName = "default"
	DefaultStore   = "nvme-ssd"
	DefaultNetwork = "10-gigabit"
)

// ProfilesFile is the JSON form of a profiles file: {"devices": {"name":
// Device}, "networks": {...}, "cpus": {...}}, each part optional. Names
// must pass CheckProfileName.
type ProfilesFile struct {
	Devices  map[string]Device     `json:"devices,omitempty"`
	Networks map[string]Network    `json:"networks,omitempty"`
	CPUs     map[string]CPUProfile `json:"cpus,omitempty"`
}

// profileName is what a profile may be called: a name that --cpu takes
// without quoting.
var profileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// CheckProfileName says whether name can name a profile in a profiles
// file (letters, digits, '.', '_', '-'); its error wraps ErrInvalidConfig.
func CheckProfileName(name string) error {
	if !profileName.MatchString(name) {
		return fmt.Errorf("sim: %w: profile name %q: want letters, digits, '.', '_' or '-'", ErrInvalidConfig, name)
	}
	return nil
}

// Resolve looks the spec's names up (in the profiles file first) and
// checks the profiles. A name that is not known is an error wrapping
// ErrUnknownProfile; a bad value or file, one wrapping ErrInvalidConfig.
func (h Spec) Resolve() (Machine, error) {
	devs, nets, cpus := Devices, Networks, CPUs
	if h.ProfilesFile != "" {
		b, err := os.ReadFile(h.ProfilesFile)
		if err != nil {
			return Machine{}, fmt.Errorf("sim: %w: --profiles: %w", ErrInvalidConfig, err)
		}
		var f ProfilesFile
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return Machine{}, fmt.Errorf("sim: %w: --profiles %s: %w", ErrInvalidConfig, h.ProfilesFile, err)
		}
		devs, nets, cpus = merged(Devices, f.Devices), merged(Networks, f.Networks), merged(CPUs, f.CPUs)
	}
	hw := Machine{Cores: h.Cores, CPUName: or(h.CPU, DefaultCPUName), StoreName: or(h.Store, DefaultStore),
		NetworkName: or(h.Network, DefaultNetwork)}
	hw.LogName = or(h.Log, hw.StoreName)
	if hw.Cores == 0 {
		hw.Cores = DefaultCores
	}
	if hw.Cores < 1 || hw.Cores > 1024 {
		return Machine{}, fmt.Errorf("sim: %w: --cores %d: want 1 to 1024", ErrInvalidConfig, hw.Cores)
	}
	var ok bool
	if hw.CPU, ok = cpus[hw.CPUName]; !ok {
		return Machine{}, fmt.Errorf("%w: cpu %q: want one of %s", ErrUnknownProfile, hw.CPUName, names(cpus))
	}
	if hw.Store, ok = devs[hw.StoreName]; !ok {
		return Machine{}, fmt.Errorf("%w: store device %q: want one of %s", ErrUnknownProfile, hw.StoreName, names(devs))
	}
	if hw.Log, ok = devs[hw.LogName]; !ok {
		return Machine{}, fmt.Errorf("%w: log device %q: want one of %s", ErrUnknownProfile, hw.LogName, names(devs))
	}
	if hw.Network, ok = nets[hw.NetworkName]; !ok {
		return Machine{}, fmt.Errorf("%w: network %q: want one of %s", ErrUnknownProfile, hw.NetworkName, names(nets))
	}
	if err := hw.validate(); err != nil {
		return Machine{}, err
	}
	return hw, nil
}

// Bounds on profile values: generous for any real hardware, and small
// enough that no price can overflow 64-bit nanoseconds over a run.
// MaxCPUCost is exported for fits (calibrate), which must stay within it.
const (
	maxLatency   = Duration(time.Hour)
	maxIOPS      = 1e9
	maxBandwidth = 1e15 // bytes a second
	MaxCPUCost   = 1e9  // nanoseconds an event
)

func (hw *Machine) validate() error {
	for _, d := range []struct {
		name string
		d    Device
	}{{hw.StoreName, hw.Store}, {hw.LogName, hw.Log}} {
		lat := []Duration{d.d.ReadLatency, d.d.WriteLatency, d.d.SyncLatency}
		switch {
		case slices.Min(lat) < 0 || slices.Max(lat) > maxLatency:
			return fmt.Errorf("sim: %w: device %q: latencies must be from 0 to %v", ErrInvalidConfig, d.name, time.Duration(maxLatency))
		case d.d.IOPS < 0 || d.d.IOPS > maxIOPS:
			return fmt.Errorf("sim: %w: device %q: IOPS must be from 0 (no limit) to %d", ErrInvalidConfig, d.name, int64(maxIOPS))
		case d.d.ReadBandwidth <= 0 || d.d.WriteBandwidth <= 0 || d.d.ReadBandwidth > maxBandwidth || d.d.WriteBandwidth > maxBandwidth:
			return fmt.Errorf("sim: %w: device %q: bandwidth must be more than zero and at most %d bytes a second", ErrInvalidConfig, d.name, int64(maxBandwidth))
		}
	}
	if n := hw.Network; n.RoundTrip < 0 || n.RoundTrip > maxLatency || n.Bandwidth <= 0 || n.Bandwidth > maxBandwidth ||
		n.ServerRequest < 0 || n.ServerRequest > maxLatency {
		return fmt.Errorf("sim: %w: network %q: want a round trip and a server request from 0 to %v and a bandwidth above zero, at most %d bytes a second",
			ErrInvalidConfig, hw.NetworkName, time.Duration(maxLatency), int64(maxBandwidth))
	}
	for _, c := range hw.CPU.Costs() {
		if !(c >= 0 && c <= MaxCPUCost) { // NaN fails too
			return fmt.Errorf("sim: %w: cpu %q: every cost must be from 0 to %g nanoseconds", ErrInvalidConfig, hw.CPUName, float64(MaxCPUCost))
		}
	}
	return nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func merged[V any](base, over map[string]V) map[string]V {
	m := make(map[string]V, len(base)+len(over))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range over {
		m[k] = v
	}
	return m
}

func names[V any](m map[string]V) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ", ")
}
