Rails.application.configure do
  config.cache_classes = true
  config.consider_all_requests_local = true # vuln: ruby.debug.rails-local-requests
  config.force_ssl = true
end
