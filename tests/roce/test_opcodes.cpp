// The opcode table (roce/opcodes.h): names and the headers each opcode
// carries, spot-checked against the kernel's rxe_opcode[] table.

#include <doctest/doctest.h>

#include "roce/opcodes.h"

using namespace rxerun::roce;

TEST_CASE("roce: opcode names, stable and for people") {
  CHECK(opcode_name(0x0a) == "RC_RDMA_WRITE_ONLY");
  CHECK(opcode_name(0x00) == "RC_SEND_FIRST");
  CHECK(opcode_name(0x17) == "RC_SEND_ONLY_WITH_INVALIDATE");
  CHECK(opcode_name(0x2a) == "UC_RDMA_WRITE_ONLY");
  CHECK(opcode_name(0x64) == "UD_SEND_ONLY");
  CHECK(opcode_name(0x81) == "CNP");
  CHECK(opcode_name(0x15) == "UNKNOWN_0x15");  // RC 21 is not defined
  CHECK(opcode_name(0x2c) == "UNKNOWN_0x2c");  // UC has no READ
  CHECK(opcode_name(0x60) == "UNKNOWN_0x60");  // UD has only SEND_ONLY (+ immediate)
  CHECK(opcode_name(0x80) == "UNKNOWN_0x80");
  CHECK(operation_name(0x6a) == "");
  CHECK(operation_name(0x0b) == "RDMA_WRITE_ONLY_WITH_IMMEDIATE");
  CHECK(transport_name(0x44) == "RD");
  CHECK(opcode_display_name(0x0a) == "RC RDMA Write Only");
  CHECK(opcode_display_name(0x65) == "UD Send Only With Immediate");
  CHECK(opcode_display_name(0x12) == "RC Atomic Acknowledge");
  CHECK(opcode_display_name(0x81) == "CNP");
}

TEST_CASE("roce: the extension headers of each opcode follow the kernel's table") {
  CHECK(opcode_headers(0x00) == 0u);                // SEND_FIRST
  CHECK(opcode_headers(0x03) == unsigned{kImmDt});  // SEND_LAST_WITH_IMMEDIATE
  CHECK(opcode_headers(0x06) == unsigned{kReth});   // WRITE_FIRST
  CHECK(opcode_headers(0x07) == 0u);                // WRITE_MIDDLE
  CHECK(opcode_headers(0x09) == unsigned{kImmDt});  // WRITE_LAST_WITH_IMMEDIATE
  CHECK(opcode_headers(0x0b) == (kReth | kImmDt));  // WRITE_ONLY_WITH_IMMEDIATE
  CHECK(opcode_headers(0x0c) == unsigned{kReth});   // READ_REQUEST
  CHECK(opcode_headers(0x0e) == 0u);                // READ_RESPONSE_MIDDLE
  CHECK(opcode_headers(0x0f) == unsigned{kAeth});   // READ_RESPONSE_LAST
  CHECK(opcode_headers(0x11) == unsigned{kAeth});   // ACKNOWLEDGE
  CHECK(opcode_headers(0x12) == (kAeth | kAtomicAckEth));
  CHECK(opcode_headers(0x14) == unsigned{kAtomicEth});  // FETCH_ADD
  CHECK(opcode_headers(0x16) == unsigned{kIeth});       // SEND_LAST_WITH_INVALIDATE
  CHECK(opcode_headers(0x26) == unsigned{kReth});       // UC WRITE_FIRST
  CHECK(opcode_headers(0x41) == (kRdeth | kDeth));      // RD SEND_MIDDLE
  CHECK(opcode_headers(0x4d) == (kRdeth | kAeth));      // RD READ_RESPONSE_FIRST: no DETH
  CHECK(opcode_headers(0x53) == (kRdeth | kDeth | kAtomicEth));
  CHECK(opcode_headers(0x64) == unsigned{kDeth});
  CHECK(opcode_headers(0x65) == (kDeth | kImmDt));
  CHECK(opcode_headers(0x81) == unsigned{kCnpReserved});
  CHECK_FALSE(opcode_headers(0xa4));  // XRC: not decoded
  CHECK_FALSE(opcode_headers(0x15));
  CHECK_FALSE(opcode_headers(0xff));
}
