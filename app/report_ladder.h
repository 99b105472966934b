#pragma once
// The packet ladder of a capture file, for the HTML report: a sequence
// diagram (inline SVG, one lifeline per IP address, one row per frame, one
// arrow per RoCEv2 packet), a PSN-over-time strip per request flow, and each
// drawn packet's headers as compact JSON from which ladder_script() builds a
// detail panel on click. Frames are decoded by roce::decode(), counted by
// roce::Summary (whose rule marks PSN repeats and gaps), so the ladder agrees
// with `rxerun decode` and with a capture step's facts.
//
// What the page can rely on (PREFIX is LadderOptions::id_prefix):
//   div.ladder#PREFIX[data-ladder=PREFIX]  the fragment
//   p.ladder-summary                       the counts, one line
//   div.ladder-scroll > svg.ladder-head    lifeline headings (sticky)
//                     > svg.ladder-rows#PREFIX-rows
//   g[data-packet=FRAME]                   one per drawn frame, nothing else carries data-packet;
//                                          classes: pk and one kind (request, response, ack, nak,
//                                          rnr-nak, cnp, other, malformed), then any of retransmit,
//                                          gap, icrc-bad
//   aside.ladder-panel#PREFIX-panel        the detail panel, hidden until a click
//   p.ladder-note                          frames left out, a file cut short, no frames
//   div.psn-strips > figure.psn-strip[data-flow="IP/0xQPQPQP"]
//   script#PREFIX-packets                  type application/json: the drawn packets' fields

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"

namespace rxerun {

struct LadderOptions {
  // Makes every element id of this ladder unique on a page with several captures.
  std::string id_prefix = "cap0";
  // Frames drawn; beyond, a note says how many were left out and to run `rxerun decode FILE`.
  std::size_t max_packets = 3000;
  // The capture's file name as the page names it (for the note and headings); the file's own
  // name when empty.
  std::string shown_name;
};

// The ladder of one capture file as an HTML fragment (a <div class="ladder" ...>), or an error
// saying why the file could not be read (missing, not a pcap, unsupported link type), without the
// file's name: the page then shows a note instead. A file cut short mid-frame renders the frames
// before and a note. The summary counts every frame of the file; the diagram, the strips and the
// JSON hold the first max_packets.
Result<std::string> render_ladder_html(const std::string& pcap_path, const LadderOptions& options);

// The ladder's CSS and its small script, included once per page (the page inlines them). The
// script is plain ES2017, uses nothing outside the page, and finds every div.ladder by itself.
std::string_view ladder_css();
std::string_view ladder_script();

}  // namespace rxerun
