#!/usr/bin/env bash
# The real parts some suites drive that npm cannot bring, from Debian's packages, installed only
# when missing (a fresh machine of this kind has curl, tmux and dbus-daemon; the rest come here):
#   curl (a BROWSER command), tmux (the terminal suite), dbus-daemon (the keyring suites' session bus),
#   puma + ruby-rack (the service family's own server stack, for the proxy's framing attacks),
#   bwrap, socat and rg (exec --sandbox's engine), sshd (the agent forwarded over SSH),
#   ruby-doorkeeper + ruby-rails + ruby-sqlite3 (a real Doorkeeper 5.5, the service's own OAuth server).
# `npm test` runs this first; so does .ci/run. Without root and without sudo it names what is
# missing and exits non-zero: the suites fail, never skip, without what they need.
set -euo pipefail
declare -A package_of=(
  [curl]=curl [tmux]=tmux [dbus-daemon]=dbus-daemon [puma]=puma [bwrap]=bubblewrap [sshd]=openssh-server
  [socat]=socat [rg]=ripgrep
)
missing=()
for command in curl tmux dbus-daemon puma bwrap socat rg; do
  command -v "$command" >/dev/null 2>&1 || missing+=("${package_of[$command]}")
done
[ -x /usr/sbin/sshd ] || command -v sshd >/dev/null 2>&1 || missing+=(openssh-server)
# puma needs Rack to run the app; Debian's puma does not depend on it.
ruby -e 'require "rack"' >/dev/null 2>&1 || missing+=(ruby-rack)
# The real Doorkeeper the interop suites start (test/support/doorkeeper/config.ru).
ruby -e 'require "rails"; require "active_record/railtie"; require "doorkeeper"' >/dev/null 2>&1 ||
  missing+=(ruby-doorkeeper ruby-rails)
ruby -e 'require "sqlite3"' >/dev/null 2>&1 || missing+=(ruby-sqlite3)
[ "${#missing[@]}" -eq 0 ] && exit 0
echo "installing Debian packages the suites need: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo"; else
    echo "cannot install ${missing[*]} without root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
