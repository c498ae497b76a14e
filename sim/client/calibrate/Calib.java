// Calib times a JDBC driver's own CPU a statement and a row, for the
// calibration script (run.sh, step java); it is not part of go test.
//
// Usage: java -cp .:driver.jar Calib URL LABEL point|range REPS ROWS MAXKEY
//
// One thread runs a PreparedStatement with autocommit on, a random key
// each time (seeded), and reads every column of every row, as a kit does:
// point is a 1-row SELECT by primary key, range a ROWS-row SELECT of a key
// range. The table is the one the script's pg step (pgbench_accounts) or
// mysql step (sbtest1) loaded, chosen by the URL. The thread's CPU
// (ThreadMXBean) is split into user time, the driver's work (building the
// messages, decoding the rows into Java objects), and system time, its
// socket calls; the wait for the server is neither. After a warm-up that
// lets the JIT compile the driver's paths, each of REPS runs lasts about
// five seconds; the run with the most statements a second is printed,
// every run as a "#" line above it.
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Random;

public class Calib {
    static final long RUN_NS = 5_000_000_000L, WARMUP_NS = 5_000_000_000L;

    public static void main(String[] a) throws Exception {
        String url = a[0], label = a[1], kind = a[2];
        int reps = Integer.parseInt(a[3]), rows = Integer.parseInt(a[4]), maxKey = Integer.parseInt(a[5]);
        boolean pg = url.startsWith("jdbc:postgresql:");
        String cols = pg ? "aid, bid, abalance, filler FROM pgbench_accounts WHERE aid" : "id, k, c, pad FROM sbtest1 WHERE id";
        boolean range = kind.equals("range");
        String sql = "SELECT " + cols + (range ? " BETWEEN ? AND ?" : " = ?");
        int want = range ? rows : 1;
        String name = "java_" + label + "_" + (range ? "range" + rows : "point");
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Random rnd = new Random(1);
        try (Connection c = DriverManager.getConnection(url); PreparedStatement ps = c.prepareStatement(sql)) {
            c.setAutoCommit(true);
            run(ps, pg, rnd, range, rows, maxKey, want, WARMUP_NS);
            double bestRate = 0;
            String best = null;
            for (int r = 1; r <= reps; r++) {
                long cpu0 = mx.getCurrentThreadCpuTime(), user0 = mx.getCurrentThreadUserTime(), t0 = System.nanoTime();
                long n = run(ps, pg, rnd, range, rows, maxKey, want, RUN_NS);
                long cpu1 = mx.getCurrentThreadCpuTime(), user1 = mx.getCurrentThreadUserTime(), t1 = System.nanoTime();
                double rate = n * 1e9 / (t1 - t0), user = (double) (user1 - user0) / n, sys = (double) ((cpu1 - cpu0) - (user1 - user0)) / n;
                String line = String.format("%s stmts_per_s %.0f user_ns_per_stmt %.0f sys_ns_per_stmt %.0f rows_per_stmt %d load %s",
                        name, rate, user, sys, want, load());
                System.out.println("#  run " + r + ": " + line);
                if (rate > bestRate) {
                    bestRate = rate;
                    best = line;
                }
            }
            System.out.println(best + " (best of " + reps + " by statements/s)");
        }
    }

    // run executes the statement until ns have passed and returns how many
    // times; every column of every row is read.
    static long run(PreparedStatement ps, boolean pg, Random rnd, boolean range, int rows, int maxKey, int want, long ns) throws Exception {
        long n = 0, end = System.nanoTime() + ns, sink = 0;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 100; i++) {
                int k = 1 + rnd.nextInt(maxKey - rows);
                ps.setInt(1, k);
                if (range) {
                    ps.setInt(2, k + rows - 1);
                }
                int got = 0;
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        // pgbench_accounts: three integers and a CHAR(84);
                        // sbtest1: two integers, a CHAR(120) and a CHAR(60).
                        sink += rs.getInt(1) + rs.getInt(2) + (pg ? rs.getInt(3) : rs.getString(3).length()) + rs.getString(4).length();
                        got++;
                    }
                }
                if (got != want) {
                    throw new IllegalStateException("key " + k + ": " + got + " rows, want " + want);
                }
                n++;
            }
        }
        if (sink == 42) {
            System.err.println(); // keeps the reads from being optimized away
        }
        return n;
    }

    static String load() throws Exception {
        String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
        return f[0] + "," + f[1] + "," + f[2];
    }
}
