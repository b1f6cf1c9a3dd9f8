# A real Doorkeeper 5.5 (Debian's ruby-doorkeeper, Rails 6.1, SQLite) mounted at /oauth2, as the
# service's family runs it, for the tests that must meet the real server rather than the emulator.
# Configured by the environment (test/support/doorkeeper.ts sets it):
#   DK_DB             the SQLite file
#   DK_CLIENT_ID, DK_CLIENT_SECRET, DK_REDIRECT_URIS (newline-separated)   the confidential client
#   DK_TTL            access token lifetime in seconds (default 7200)
#   DK_REVOKE_PREVIOUS_CC=1   revoke_previous_client_credentials_token
#   DK_REUSE=1                reuse_access_token
# Beside Doorkeeper's routes: GET /api/me (a bearer-protected resource) and GET /_test/tokens (every
# access token record, for the test's own checks; loopback only, as the whole server is).
require "logger"
require "rails"
require "active_record/railtie"
require "action_controller/railtie"
require "doorkeeper"

ENV["DATABASE_URL"] = "sqlite3:#{ENV.fetch("DK_DB")}"

class DoorkeeperTestApp < Rails::Application
  config.root = __dir__
  config.eager_load = false
  config.logger = Logger.new($stderr, level: :error)
  config.secret_key_base = "0" * 64
  config.hosts.clear
  config.action_controller.allow_forgery_protection = false
  config.active_record.sqlite3&.represent_boolean_as_integer = true if config.active_record.respond_to?(:sqlite3)
end

Doorkeeper.configure do
  orm :active_record
  base_controller "ActionController::Base"
  # The resource owner is signed in already, and approves: the tests drive no login form.
  resource_owner_authenticator { User.first }
  skip_authorization { true }
  admin_authenticator { head :forbidden }
  access_token_expires_in Integer(ENV.fetch("DK_TTL", "7200"))
  use_refresh_token
  grant_flows %w[authorization_code client_credentials implicit]
  default_scopes :service
  force_ssl_in_redirect_uri false
  revoke_previous_client_credentials_token if ENV["DK_REVOKE_PREVIOUS_CC"] == "1"
  reuse_access_token if ENV["DK_REUSE"] == "1"
end

class User < ActiveRecord::Base; end

class ApiController < ActionController::Base
  before_action :doorkeeper_authorize!

  def me
    render json: { id: doorkeeper_token.resource_owner_id, scope: doorkeeper_token.scopes.to_s }
  end
end

class TestStateController < ActionController::Base
  def tokens
    render json: Doorkeeper::AccessToken.order(:id).map { |t|
      { id: t.id, token: t.token, refresh_token: t.refresh_token, revoked: t.revoked?,
        revoked_at_ms: t.revoked_at && (t.revoked_at.to_f * 1000).round,
        expired: t.expired?, application_id: t.application_id, resource_owner_id: t.resource_owner_id }
    }
  end
end

DoorkeeperTestApp.initialize!

ActiveRecord::Base.logger = nil
ActiveRecord::Schema.verbose = false
ActiveRecord::Schema.define do
  create_table :users, force: true do |t|
    t.string :name
  end
  create_table :oauth_applications, force: true do |t|
    t.string :name, null: false
    t.string :uid, null: false, index: { unique: true }
    t.string :secret, null: false
    t.text :redirect_uri, null: false
    t.string :scopes, null: false, default: ""
    t.boolean :confidential, null: false, default: true
    t.timestamps null: false
  end
  create_table :oauth_access_grants, force: true do |t|
    t.references :resource_owner, null: false
    t.references :application, null: false
    t.string :token, null: false, index: { unique: true }
    t.integer :expires_in, null: false
    t.text :redirect_uri, null: false
    t.datetime :created_at, null: false
    t.datetime :revoked_at
    t.string :scopes, null: false, default: ""
    t.string :code_challenge
    t.string :code_challenge_method
  end
  create_table :oauth_access_tokens, force: true do |t|
    t.references :resource_owner, index: true
    t.references :application, null: false
    t.string :token, null: false, index: { unique: true }
    t.string :refresh_token, index: { unique: true }
    t.integer :expires_in
    t.datetime :revoked_at
    t.datetime :created_at, null: false
    t.string :scopes
    t.string :previous_refresh_token, null: false, default: ""
  end
end

User.create!(name: "resource owner")
Doorkeeper::Application.create!(
  name: "mmauth tests",
  uid: ENV.fetch("DK_CLIENT_ID"),
  secret: ENV.fetch("DK_CLIENT_SECRET"),
  redirect_uri: ENV.fetch("DK_REDIRECT_URIS", "http://127.0.0.1/callback"),
  scopes: "service",
  confidential: true,
)

DoorkeeperTestApp.routes.draw do
  use_doorkeeper scope: "oauth2"
  get "/api/me", to: "api#me"
  get "/_test/tokens", to: "test_state#tokens"
end

run DoorkeeperTestApp
