#!/usr/bin/env bash
# Debian packages okgin needs beyond Python: card designs and backgrounds for the scene
# generator, rsvg-convert to render them, Chromium for the browser test, and the GL and GLib
# libraries that the opencv-python wheel loads (present on a desktop, absent on a bare server).
set -euo pipefail
packages=(gnome-cards-data kdegames-card-data-kf5 librsvg2-bin chromium pokerth-data mate-backgrounds gimp-data
          libgl1 libglib2.0-0)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
