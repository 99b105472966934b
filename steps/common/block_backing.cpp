#include "steps/common/block_backing.h"

#include <algorithm>
#include <cerrno>

#include "base/size.h"
#include "base/try.h"
#include "steps/common/identity.h"

namespace rxerun::steps {

namespace {

constexpr Duration kBackingPoll{20};

}  // namespace

Result<ConfigfsMountRecord> ConfigfsMountRecord::read(JournalArgs& a) {
  ConfigfsMountRecord r{a.text("configfs_mount"), a.identity()};
  if (a.ok() && r.path != sys::kConfigfsPath) a.refuse("configfs_mount", sys::kConfigfsPath);
  if (!a.ok()) return a.error();
  return r;
}

Result<BackingFileRecord> BackingFileRecord::read(JournalArgs& a) {
  BackingFileRecord r{a.text("file"), a.identity()};
  if (a.ok() && !r.path.starts_with("/")) a.refuse("file", "an absolute path");
  if (!a.ok()) return a.error();
  return r;
}

Result<NullBlkRecord> NullBlkRecord::read(JournalArgs& a) {
  NullBlkRecord r{a.text("null_blk"), a.identity()};
  if (a.ok() && (!r.name.starts_with(kNullBlkPrefix) || r.name.size() > 31 || r.name.find('/') != std::string::npos))
    a.refuse("null_blk", "a null_blk device name of rxerun's");
  if (!a.ok()) return a.error();
  return r;
}

std::vector<ParamSpec> with_backing_fields(std::string_view example_path, std::vector<ParamSpec> more) {
  const ParamSpec size_param{.name = "size",
                             .type = ParamType::Size,
                             .required = true,
                             .help = "bytes, or with a binary unit: 64MiB, 1GiB",
                             .min = 4096};
  std::vector<ParamSpec> fields = {
      {.name = "file",
       .type = ParamType::Object,
       .help = "a file, created with that size (sparse) when absent and then deleted at cleanup",
       .fields = {{.name = "path",
                   .type = ParamType::String,
                   .required = true,
                   .help = "absolute: " + std::string(example_path) + " (not on overlayfs; see the docs)"},
                  size_param}},
      {.name = "null_blk",
       .type = ParamType::Object,
       .help = "a memory-backed null_blk device of that size (whole MiB), made for the step",
       .fields = {size_param}},
  };
  for (auto& f : more) fields.push_back(std::move(f));
  return fields;
}

void validate_backing(const nlohmann::json& backing, const std::string& where, const KindSpec::Complaint& complain) {
  const bool file = backing.contains("file"), null_blk = backing.contains("null_blk");
  if (file == null_blk) complain(where, "'" + where + "' takes one backing: file: {path, size} or null_blk: {size}");
  if (file) {
    const auto& path = backing.at("file").at("path");
    if (path.is_string() && !path.get_ref<const std::string&>().starts_with("/"))
      complain(where + ".file.path", "'" + where + ".file.path' must be an absolute path (the kernel opens it)");
  }
  if (null_blk) {
    const auto& size = backing.at("null_blk").at("size");
    if (size.is_number_unsigned() && size.get<std::uint64_t>() % kMiB != 0)
      complain(where + ".null_blk.size", "'" + where +
                                             ".null_blk.size' must be a whole number of MiB (null_blk sizes its "
                                             "devices in MiB), got " +
                                             format_size(size.get<std::uint64_t>()));
  }
}

Result<void> ensure_configfs(StepContext& ctx) {
  auto& storage = ctx.sys().storage;
  RXERUN_TRY_ASSIGN(const auto mounted, storage.configfs_mount());
  if (mounted) return {};
  RXERUN_TRY(ctx.will_change(ConfigfsMountRecord{sys::kConfigfsPath, nullptr}.to_args(),
                             std::string("unmount configfs from ") + sys::kConfigfsPath + " (mounted by this run)"));
  RXERUN_TRY_ASSIGN(const auto id, storage.mount_configfs());
  return ctx.identify({{"mount_id", id}});
}

Result<Backing> make_file_backing(const Params& file, StepContext& ctx, std::vector<std::string>* hints) {
  auto& storage = ctx.sys().storage;
  const std::string path = file.str("path");
  const std::uint64_t size = file.size("size");
  RXERUN_TRY_ASSIGN(const auto found, storage.file_id(path));
  if (found) {
    if (found->size != size)
      hints->push_back(path + " was there already with " + std::to_string(found->size) +
                       " bytes: served as it is (and left in place)");
    return Backing{path, found->size, false};
  }
  RXERUN_TRY(ctx.will_change(BackingFileRecord{path, nullptr}.to_args(), "delete " + path + " (created by this run)"));
  RXERUN_TRY_ASSIGN(const auto made, storage.create_file(path, size));
  RXERUN_TRY(ctx.identify({{"dev", made.dev}, {"ino", made.ino}}));
  return Backing{path, size, true};
}

Result<Backing> make_null_blk_backing(const Params& null_blk, StepContext& ctx) {
  auto& storage = ctx.sys().storage;
  const std::uint64_t size = null_blk.size("size");
  RXERUN_TRY_ASSIGN(const auto existing, storage.null_blks());
  // The lowest free name of ours; the disk is named after it (at most 31 bytes).
  std::string name;
  for (unsigned n = 0; name.empty(); ++n) {
    const std::string candidate = kNullBlkPrefix + std::to_string(n);
    if (std::none_of(existing.begin(), existing.end(), [&](const sys::NullBlk& b) { return b.name == candidate; }))
      name = candidate;
  }
  RXERUN_TRY(ctx.will_change(NullBlkRecord{name, nullptr}.to_args(), "remove null_blk device " + name));
  RXERUN_TRY(storage.add_null_blk(name, size / kMiB));
  RXERUN_TRY_ASSIGN(const auto now, storage.null_blks());
  auto it = std::find_if(now.begin(), now.end(), [&](const sys::NullBlk& b) { return b.name == name; });
  if (it == now.end() || !it->powered) return make_error("null_blk device " + name + " did not power on", EIO);
  RXERUN_TRY(ctx.identify({{"index", it->index}}));
  // devtmpfs makes the node as the disk is added; wait for it all the same.
  const std::string disk = it->disk.substr(it->disk.rfind('/') + 1);
  for (;;) {
    RXERUN_TRY_ASSIGN(const bool there, storage.block_device(disk));
    if (there) break;
    if (ctx.sleep_for(kBackingPoll) != WaitStatus::Done)
      return make_error("the block device " + it->disk + " did not appear", ETIMEDOUT);
  }
  return Backing{it->disk, size, false};
}

Result<Backing> make_backing(const Params& backing, StepContext& ctx, std::vector<std::string>* hints) {
  if (backing.has("file")) return make_file_backing(backing.object("file"), ctx, hints);
  return make_null_blk_backing(backing.object("null_blk"), ctx);
}

Result<nlohmann::json> undo_null_blk(const NullBlkRecord& record, UndoContext& ctx) {
  const std::string& name = record.name;
  RXERUN_TRY_ASSIGN(const auto all, ctx.sys().storage.null_blks());
  auto it = std::find_if(all.begin(), all.end(), [&](const sys::NullBlk& b) { return b.name == name; });
  if (it == all.end()) return nlohmann::json::object();
  if (auto index = identity_number(record.identity, "index"); index && *index != it->index)
    return make_error("null_blk device " + name + " is another one than this run made (index " +
                      std::to_string(it->index) + "): left alone");
  if (auto r = ctx.sys().storage.remove_null_blk(name); !r && r.error().code != ENOENT) return r.error();
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_backing_file(const BackingFileRecord& record, UndoContext& ctx) {
  const std::string& path = record.path;
  RXERUN_TRY_ASSIGN(const auto found, ctx.sys().storage.file_id(path));
  if (!found) return nlohmann::json::object();
  if (record.identity.is_null())
    // Made, but the run ended before it said which file: one there now may be someone else's.
    return nlohmann::json{{"left_alone", path + " (the journal does not say which file this run created)"}};
  const nlohmann::json now = {{"dev", found->dev}, {"ino", found->ino}};
  if (differs(record.identity, now))
    return make_error(path + " is another file than the one this run created (device " + std::to_string(found->dev) +
                      ", inode " + std::to_string(found->ino) + "): left alone");
  if (auto r = ctx.sys().storage.remove_file(path); !r && r.error().code != ENOENT) return r.error();
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_configfs_mount(const ConfigfsMountRecord& record, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto mounted, ctx.sys().storage.configfs_mount());
  if (!mounted) return nlohmann::json::object();
  if (auto mount_id = identity_number(record.identity, "mount_id"); mount_id && *mount_id != *mounted)
    return nlohmann::json{{"left_alone", std::string("configfs on ") + sys::kConfigfsPath + " (mounted again since)"}};
  if (auto r = ctx.sys().storage.unmount_configfs(); !r) {
    if (r.error().code == EBUSY)
      return make_error(std::string("configfs on ") + sys::kConfigfsPath + " is in use: left mounted", EBUSY);
    if (r.error().code != EINVAL) return r.error();
  }
  return nlohmann::json::object();
}

Result<std::vector<std::string>> null_blk_users(UndoContext& ctx) {
  std::vector<std::string> users;
  RXERUN_TRY_ASSIGN(const auto blks, ctx.sys().storage.null_blks());
  for (const auto& b : blks) users.push_back("null_blk device " + b.name);
  return users;
}

}  // namespace rxerun::steps
