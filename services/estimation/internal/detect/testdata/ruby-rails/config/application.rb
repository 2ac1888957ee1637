require 'rails/all'

module Shop
  class Application < Rails::Application
  end
end
