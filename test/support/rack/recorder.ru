# A Rack app of the service's own stack (puma + Rack, Rack::MethodOverride in front as Rails has it)
# that records every request it is handed: method (after any override), path, Authorization, body.
# GET /__seen (asked directly, never through the proxy) lists them as JSON.
require 'json'

SEEN = []
LOCK = Mutex.new

recorder = lambda do |env|
  if env['PATH_INFO'] == '/__seen'
    list = LOCK.synchronize { SEEN.dup }
    return [200, { 'content-type' => 'application/json' }, [JSON.generate(list)]]
  end
  body = (env['rack.input'] ? env['rack.input'].read.to_s : '').dup
  entry = {
    method: env['REQUEST_METHOD'],
    path: env['PATH_INFO'],
    authorization: env['HTTP_AUTHORIZATION'],
    body: body.force_encoding('BINARY').encode('UTF-8', invalid: :replace, undef: :replace),
  }
  LOCK.synchronize { SEEN << entry }
  [200, { 'content-type' => 'application/json' }, [JSON.generate(method: entry[:method], path: entry[:path], body: entry[:body])]]
end

use Rack::MethodOverride
run recorder
