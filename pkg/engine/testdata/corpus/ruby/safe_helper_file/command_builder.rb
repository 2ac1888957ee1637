# Builds shell commands for exports.
require "shellwords"

module CommandBuilder
  def self.archive(folder)
    "tar czf /tmp/export.tgz #{Shellwords.escape(folder)}"
  end
end
