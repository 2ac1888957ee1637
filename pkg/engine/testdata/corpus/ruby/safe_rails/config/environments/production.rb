# safe: ruby.debug.rails-local-requests
Rails.application.configure do
  config.cache_classes = true
  config.consider_all_requests_local = false
  config.force_ssl = true
end
