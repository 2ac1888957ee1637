# Builds shell commands for exports.
module CommandBuilder
  def self.archive(folder)
    "tar czf /tmp/export.tgz #{folder}"
  end
end
