# safe: ruby.debug.rails-local-requests (detailed errors are expected in development)
Rails.application.configure do
  config.cache_classes = false
  config.consider_all_requests_local = true
end
