# Runs a report for one region.
class ReportQuery
  def initialize(region)
    @region = region
  end

  def call
    Sale.where("region = ?", @region)
  end
end
