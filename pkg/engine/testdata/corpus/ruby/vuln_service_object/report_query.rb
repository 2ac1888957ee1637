# Runs a report for one region.
class ReportQuery
  def initialize(region)
    @region = region
  end

  def call
    Sale.where("region = '#{@region}'") # vuln: ruby.sqli.string-query
  end
end
