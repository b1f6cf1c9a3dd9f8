# A real Doorkeeper 5.5 (Debian's ruby-doorkeeper, Rails 6.1, SQLite) mounted at /oauth2, as the
# service's family runs it, for the tests that must meet the real server rather than the emulator.
# Configured by the environment (test/support/doorkeeper.ts sets it):
#   DK_DB             the SQLite file
#   DK_CLIENT_ID, DK_CLIENT_SECRET, DK_REDIRECT_URIS (newline-separated)   the confidential client
#   DK_TTL            access token lifetime in seconds (default 7200)
#   DK_REVOKE_PREVIOUS_CC=1   revoke_previous_client_credentials_token
#   DK_REUSE=1                reuse_access_token
#   DK_DEVICE_INTERVAL, DK_DEVICE_LIFETIME   the device grant's poll interval and code lifetime (s)
# The device authorization grant (RFC 8628) is the project's own, registered through Doorkeeper's
# custom grant flow API (Doorkeeper::GrantFlow, in Debian's 5.5), as GitLab serves it:
# POST /oauth2/authorize_device, a page at /oauth2/device where the signed-in user enters the code,
# and the urn:ietf:params:oauth:grant-type:device_code strategy at the token endpoint.
# Beside Doorkeeper's routes: GET /api/me (a bearer-protected resource) and GET /_test/tokens (every
# access token record, for the test's own checks; loopback only, as the whole server is).
require "logger"
require "rails"
require "active_record/railtie"
require "action_controller/railtie"
require "doorkeeper"

ENV["DATABASE_URL"] = "sqlite3:#{ENV.fetch("DK_DB")}"

# One device authorization (RFC 8628 §3.2): its codes, the client, the user's decision, the polling.
class DeviceGrant < ActiveRecord::Base
  USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ".chars.freeze # RFC 8628 §6.1

  def self.normalise(user_code)
    user_code.to_s.upcase.gsub(/[\s-]/, "")
  end

  def self.issue(application, scopes)
    letters = Array.new(8) { USER_CODE_ALPHABET[SecureRandom.random_number(USER_CODE_ALPHABET.size)] }
    create!(
      device_code: SecureRandom.urlsafe_base64(32),
      user_code: "#{letters[0, 4].join}-#{letters[4, 4].join}",
      application_id: application.id,
      scopes: scopes,
      expires_at: Time.now + Integer(ENV.fetch("DK_DEVICE_LIFETIME", "600")),
      interval: Integer(ENV.fetch("DK_DEVICE_INTERVAL", "5")),
    )
  end

  def self.pending(user_code)
    where(user_id: nil, denied: false).where("expires_at > ?", Time.now)
      .detect { |grant| normalise(grant.user_code) == normalise(user_code) }
  end
end

# The device code grant at the token endpoint (RFC 8628 §3.4, §3.5).
class DeviceCodeRequest
  def initialize(client, parameters)
    @client = client
    @parameters = parameters
  end

  def authorize
    return error(:invalid_client) if @client.nil?
    grant = DeviceGrant.find_by(device_code: @parameters[:device_code].to_s, application_id: @client.application.id)
    return error(:invalid_grant) if grant.nil?
    return error(:expired_token) if grant.expires_at <= Time.now
    return error(:access_denied) if grant.denied
    if grant.user_id.nil?
      too_soon = grant.last_polled_at && (Time.now - grant.last_polled_at) < grant.interval - 0.25
      grant.update!(last_polled_at: Time.now, interval: too_soon ? grant.interval + 5 : grant.interval)
      return error(too_soon ? :slow_down : :authorization_pending)
    end
    grant.destroy!
    token = Doorkeeper::AccessToken.find_or_create_for(
      application: @client.application,
      resource_owner: User.find(grant.user_id),
      scopes: Doorkeeper::OAuth::Scopes.from_string(grant.scopes),
      expires_in: Doorkeeper.config.access_token_expires_in,
      use_refresh_token: true,
    )
    Doorkeeper::OAuth::TokenResponse.new(token)
  end

  private

  def error(name)
    Doorkeeper::OAuth::ErrorResponse.new(name: name)
  end
end

class DeviceCodeStrategy < Doorkeeper::Request::Strategy
  delegate :client, :parameters, to: :server

  def request
    @request ||= DeviceCodeRequest.new(client, parameters)
  end
end

Doorkeeper::GrantFlow.register(
  :device_code,
  grant_type_matches: "urn:ietf:params:oauth:grant-type:device_code",
  grant_type_strategy: DeviceCodeStrategy,
)

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
  grant_flows %w[authorization_code client_credentials implicit device_code]
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

# POST /oauth2/authorize_device (RFC 8628 §3.1) and the verification page at /oauth2/device (§3.3).
class DeviceController < ActionController::Base
  def authorize
    credentials = Doorkeeper::OAuth::Client::Credentials.from_request(request, *Doorkeeper.config.client_credentials_methods)
    client = Doorkeeper::OAuth::Client.authenticate(credentials)
    return render(json: { error: "invalid_client" }, status: :unauthorized) if client.nil?
    scopes = params[:scope].presence || "service"
    grant = DeviceGrant.issue(client.application, scopes)
    verification = "#{request.base_url}/oauth2/device"
    response.headers["Cache-Control"] = "no-store"
    render json: {
      device_code: grant.device_code, user_code: grant.user_code,
      verification_uri: verification,
      verification_uri_complete: "#{verification}?user_code=#{CGI.escape(grant.user_code)}",
      expires_in: Integer(ENV.fetch("DK_DEVICE_LIFETIME", "600")), interval: grant.interval,
    }
  end

  def show
    render html: page(params[:user_code].to_s, nil)
  end

  def decide
    grant = DeviceGrant.pending(params[:user_code])
    return render(html: page(params[:user_code].to_s, "No sign-in waits for that code.")) if grant.nil?
    if params[:decision] == "deny"
      grant.update!(denied: true)
      render html: "<h1 id=\"result\">Device denied</h1>".html_safe
    else
      grant.update!(user_id: User.first.id)
      render html: "<h1 id=\"result\">Device approved</h1>".html_safe
    end
  end

  private

  def page(user_code, error)
    <<~HTML.html_safe
      <!doctype html><title>Connect a device</title><h1>Connect a device</h1>
      #{error && "<p id=\"error\">#{ERB::Util.html_escape(error)}</p>"}
      <form method="post" action="/oauth2/device">
      <input type="text" id="user_code" name="user_code" value="#{ERB::Util.html_escape(user_code)}">
      <button type="submit" name="decision" value="approve" id="approve">Approve</button>
      <button type="submit" name="decision" value="deny" id="deny">Deny</button>
      </form>
    HTML
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
  create_table :device_grants, force: true do |t|
    t.string :device_code, null: false, index: { unique: true }
    t.string :user_code, null: false
    t.references :application, null: false
    t.string :scopes, null: false, default: ""
    t.datetime :expires_at, null: false
    t.integer :interval, null: false
    t.datetime :last_polled_at
    t.references :user
    t.boolean :denied, null: false, default: false
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
  post "/oauth2/authorize_device", to: "device#authorize"
  get "/oauth2/device", to: "device#show"
  post "/oauth2/device", to: "device#decide"
  get "/api/me", to: "api#me"
  get "/_test/tokens", to: "test_state#tokens"
end

run DoorkeeperTestApp
