#pragma once
// What the storage targets (nvmet, srpt) serve, and configfs, which both
// are built in: a file (created sparse when absent, deleted at cleanup only
// when this run created it) or a memory-backed null_blk device made in
// configfs (/sys/kernel/config/nullb), and configfs's mount at
// /sys/kernel/config when this run had to make it. Each is journalled before
// it is made, with what tells it from a namesake made later: the file's
// device and inode, the null_blk device's index, the mount's ID.
//
// null_blk devices are made in configfs, not by module parameters: configfs
// gives a device of the size asked for (in MiB, module parameters only in
// GiB), memory-backed so that what is written reads back, under a name of
// this run's, and leaves any device of someone else's alone; null_blk
// itself is loaded with nr_devices=0 so that it makes no device of its own.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "engine/step.h"
#include "steps/common/journal_args.h"

namespace rxerun::steps {

inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
// The names of the null_blk devices rxerun makes: rxerun-nullb0, rxerun-nullb1, ...
inline constexpr const char* kNullBlkPrefix = "rxerun-nullb";

// configfs's mount, when the step mounted it (identity: its mount ID).
struct ConfigfsMountRecord {
  static constexpr std::string_view kOp = "configfs_mount";
  std::string path;
  nlohmann::json identity;  // {"mount_id"}

  nlohmann::json to_args() const { return {{"op", kOp}, {"configfs_mount", path}}; }
  static Result<ConfigfsMountRecord> read(JournalArgs& a);
};

// A backing file the step created (identity: its device and inode).
struct BackingFileRecord {
  static constexpr std::string_view kOp = "file";
  std::string path;
  nlohmann::json identity;  // {"dev", "ino"}

  nlohmann::json to_args() const { return {{"op", kOp}, {"file", path}}; }
  static Result<BackingFileRecord> read(JournalArgs& a);
};

// A null_blk device the step made (identity: its index).
struct NullBlkRecord {
  static constexpr std::string_view kOp = "null_blk";
  std::string name;
  nlohmann::json identity;  // {"index"}

  nlohmann::json to_args() const { return {{"op", kOp}, {"null_blk", name}}; }
  static Result<NullBlkRecord> read(JournalArgs& a);
};

// The parameters of a backing, for a kind's declaration: `file: {path,
// size}` and `null_blk: {size}`, one of which a step gives, then `more`.
// `example_path` shows in the path's help.
std::vector<ParamSpec> with_backing_fields(std::string_view example_path, std::vector<ParamSpec> more = {});
// Complaints about a backing object at `where` ("namespace", "backing"):
// exactly one of file and null_blk, an absolute path, a size in whole MiB.
void validate_backing(const nlohmann::json& backing, const std::string& where, const KindSpec::Complaint& complain);

// Mounts configfs when it is not, journalled first with its mount ID.
Result<void> ensure_configfs(StepContext& ctx);

struct Backing {
  std::string device;  // the file's path, or the null_blk disk: /dev/rxerun-nullb0
  std::uint64_t size = 0;
  bool file_created = false;
};

// The file at `path`: served as it is when there (a hint when its size
// differs from the one asked for), else created sparse with `size` bytes.
Result<Backing> make_file_backing(const Params& file, StepContext& ctx, std::vector<std::string>* hints);
// A null_blk device of `size` (whole MiB) under the lowest free name of
// ours, powered, its block device there. null_blk must be loaded.
Result<Backing> make_null_blk_backing(const Params& null_blk, StepContext& ctx);
// Either, as the backing object says.
Result<Backing> make_backing(const Params& backing, StepContext& ctx, std::vector<std::string>* hints);

// The undos: each leaves alone what is another one than the journal says.
Result<nlohmann::json> undo_configfs_mount(const ConfigfsMountRecord& record, UndoContext& ctx);
Result<nlohmann::json> undo_backing_file(const BackingFileRecord& record, UndoContext& ctx);
Result<nlohmann::json> undo_null_blk(const NullBlkRecord& record, UndoContext& ctx);

// The null_blk devices of `record`'s modules that still exist, as users
// that keep null_blk (or configfs) loaded.
Result<std::vector<std::string>> null_blk_users(UndoContext& ctx);

}  // namespace rxerun::steps
