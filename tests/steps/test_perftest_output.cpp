// perftest's report parser (steps/common/perftest_output.h) on real output: the
// samples below are perftest 4.5+0.17 (Debian 12) runs in the lab VM,
// kernel 7.3, between two namespaces, copied unchanged (tabs included).

#include <doctest/doctest.h>

#include <map>

#include "steps/common/perftest_output.h"

using namespace rxerun;

namespace {

// ib_write_bw -R client (rxe1, namespace vmt-pb), 4096 B x 1000
const char* kWriteBwCmClient =
    R"(---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF		Device         : rxe1
 Number of qps   : 1		Transport type : IB
 Connection type : RC		Using SRQ      : OFF
 PCIe relax order: ON
 ibv_wr* API     : OFF
 TX depth        : 128
 CQ Moderation   : 100
 Mtu             : 1024[B]
 Link type       : Ethernet
 GID index       : 1
 Max inline data : 0[B]
 rdma_cm QPs	 : ON
 Data ex. method : rdma_cm
---------------------------------------------------------------------------------------
 local address: LID 0000 QPN 0x0012 PSN 0x98c736
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:85:00:02
 remote address: LID 0000 QPN 0x0012 PSN 0x64313e
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:85:00:01
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 4096       1000             11.83              3.89   		   0.000995
---------------------------------------------------------------------------------------
)";

// ib_write_bw server without -R (rxe0, namespace vmt-pa), 1024 B x 1000
const char* kWriteBwTcpServer = R"(
************************************
* Waiting for client to connect... *
************************************
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF		Device         : rxe0
 Number of qps   : 1		Transport type : IB
 Connection type : RC		Using SRQ      : OFF
 PCIe relax order: ON
 ibv_wr* API     : OFF
 CQ Moderation   : 100
 Mtu             : 1024[B]
 Link type       : Ethernet
 GID index       : 1
 Max inline data : 0[B]
 rdma_cm QPs	 : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
 local address: LID 0000 QPN 0x0013 PSN 0x9ef6a2 RKey 0x00040a VAddr 0x00556a84180000
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:85:00:01
 remote address: LID 0000 QPN 0x0013 PSN 0xad5974 RKey 0x0004ca VAddr 0x0056211b0ac000
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:85:00:02
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 1024       1000             8.02               4.11   		   0.004207
---------------------------------------------------------------------------------------
)";

// ib_read_lat client (rxe1), 64 B x 200
const char* kReadLatClient = R"(---------------------------------------------------------------------------------------
---------------------------------------------------------------------------------------
                    RDMA_Read Latency Test
 Dual-port       : OFF		Device         : rxe1
 Number of qps   : 1		Transport type : IB
 Connection type : RC		Using SRQ      : OFF
 PCIe relax order: ON
 ibv_wr* API     : OFF
 TX depth        : 1
 Mtu             : 1024[B]
 Link type       : Ethernet
 GID index       : 1
 Outstand reads  : 128
 rdma_cm QPs	 : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
 local address: LID 0000 QPN 0x0014 PSN 0xa1a10f OUT 0x80 RKey 0x000500 VAddr 0x0055948f319000
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:85:00:02
 remote address: LID 0000 QPN 0x0014 PSN 0x3b4aa3 OUT 0x80 RKey 0x00053c VAddr 0x00556bd7038000
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:85:00:01
---------------------------------------------------------------------------------------
 #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] 
 64      200          384.76         8294.15      2124.94  	       2457.63     	1397.97		8177.38 		8294.15
---------------------------------------------------------------------------------------
)";

// ib_write_bw -x 7 client: no table, its stderr said "Failed to modify QP 21 to RTR"
const char* kBadGidClient = R"(---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF		Device         : rxe1
 Number of qps   : 1		Transport type : IB
 Connection type : RC		Using SRQ      : OFF
 PCIe relax order: ON
 ibv_wr* API     : OFF
 TX depth        : 100
 CQ Moderation   : 1
 Mtu             : 1024[B]
 Link type       : Ethernet
 GID index       : 7
 Max inline data : 0[B]
 rdma_cm QPs	 : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
)";

std::map<std::string, double> figures(const steps::PerftestReport& r) {
  return {r.figures.begin(), r.figures.end()};
}

}  // namespace

TEST_CASE("perftest output: column names of the bw and lat headers") {
  CHECK(steps::perftest_columns(" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]") ==
        std::vector<std::string>{"#bytes", "#iterations", "BW peak[MB/sec]", "BW average[MB/sec]", "MsgRate[Mpps]"});
  CHECK(steps::perftest_columns(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
                                "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ") ==
        std::vector<std::string>{"#bytes", "#iterations", "t_min[usec]", "t_max[usec]", "t_typical[usec]",
                                 "t_avg[usec]", "t_stdev[usec]", "99% percentile[usec]", "99.9% percentile[usec]"});
  CHECK(steps::perftest_columns(" #bytes        #iterations       t_avg[usec]    tps average") ==
        std::vector<std::string>{"#bytes", "#iterations", "t_avg[usec]", "tps average"});
}

TEST_CASE("perftest output: no table, or a broken row, is an error that says so") {
  auto none = steps::parse_perftest_output(" Couldn't connect to 10.0.0.1:18515\n");
  REQUIRE(!none);
  CHECK(none.error().message == "perftest printed no result table");
  auto empty = steps::parse_perftest_output(" #bytes     #iterations    BW peak[MB/sec]\n------\n");
  REQUIRE(!empty);
  CHECK(empty.error().message == "perftest's result table has no row");
  auto short_row = steps::parse_perftest_output(" #bytes     #iterations    BW peak[MB/sec]\n 1024  5000\n");
  REQUIRE(!short_row);
  CHECK(short_row.error().message.find("2 values for 3 columns") != std::string::npos);
}

TEST_CASE("perftest output: ib_write_bw with rdma_cm, the client's report") {
  auto r = steps::parse_perftest_output(kWriteBwCmClient);
  REQUIRE(r);
  const auto f = figures(*r);
  CHECK(f.size() == 5);
  CHECK(f.at("bytes") == 4096);
  CHECK(f.at("iterations") == 1000);
  CHECK(f.at("bw_peak_mib_s") == doctest::Approx(11.83));
  CHECK(f.at("bw_avg_mib_s") == doctest::Approx(3.89));
  CHECK(f.at("msg_rate_mpps") == doctest::Approx(0.000995));
  CHECK(r->figures.front().first == "bytes");  // in the table's order
  CHECK(r->local_gid == "::ffff:10.85.0.2");
  CHECK(r->remote_gid == "::ffff:10.85.0.1");
}

TEST_CASE("perftest output: the server's report (a banner before the connection, then the same table)") {
  auto r = steps::parse_perftest_output(kWriteBwTcpServer);
  REQUIRE(r);
  const auto f = figures(*r);
  CHECK(f.at("bytes") == 1024);
  CHECK(f.at("bw_avg_mib_s") == doctest::Approx(4.11));
  CHECK(r->local_gid == "::ffff:10.85.0.1");  // the server's own
  CHECK(r->remote_gid == "::ffff:10.85.0.2");
}

TEST_CASE("perftest output: ib_read_lat, every latency column") {
  auto r = steps::parse_perftest_output(kReadLatClient);
  REQUIRE(r);
  const auto f = figures(*r);
  CHECK(f.size() == 9);
  CHECK(f.at("bytes") == 64);
  CHECK(f.at("iterations") == 200);
  CHECK(f.at("lat_min_us") == doctest::Approx(384.76));
  CHECK(f.at("lat_max_us") == doctest::Approx(8294.15));
  CHECK(f.at("lat_typical_us") == doctest::Approx(2124.94));
  CHECK(f.at("lat_avg_us") == doctest::Approx(2457.63));
  CHECK(f.at("lat_stdev_us") == doctest::Approx(1397.97));
  CHECK(f.at("lat_p99_us") == doctest::Approx(8177.38));
  CHECK(f.at("lat_p999_us") == doctest::Approx(8294.15));
  CHECK(r->local_gid == "::ffff:10.85.0.2");
}

TEST_CASE("perftest output: a run that failed before its table has none") {
  auto r = steps::parse_perftest_output(kBadGidClient);
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "perftest printed no result table");
}

TEST_CASE("perftest output: a cycle counter it could not calibrate leaves only bytes and iterations") {
  // ib_write_bw -R client in the lab VM under software emulation, kernel 6.1
  const char* out =
      " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
      "Correlation coefficient r^2: 0.119835 < 0.9\n"
      " 1024       2000             0.00               0.00   \t\t   0.000000\n"
      "---------------------------------------------------------------------------------------\n";
  auto r = steps::parse_perftest_output(out);
  REQUIRE(r);
  const auto f = figures(*r);
  CHECK(f.size() == 2);
  CHECK(f.at("bytes") == 1024);
  CHECK(f.at("iterations") == 2000);
  CHECK(r->uncalibrated == "Correlation coefficient r^2: 0.119835 < 0.9");
  // perftest writes the complaint to stderr
  const char* table =
      " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
      " 1024       2000             0.00               0.00   \t\t   0.000000\n";
  auto split = steps::parse_perftest_output(table, "Correlation coefficient r^2: 0.007509 < 0.9\n");
  REQUIRE(split);
  CHECK(figures(*split).size() == 2);
  CHECK(split->uncalibrated == "Correlation coefficient r^2: 0.007509 < 0.9");
  auto fine = steps::parse_perftest_output(kWriteBwCmClient);
  REQUIRE(fine);
  CHECK(fine->uncalibrated.empty());
}
