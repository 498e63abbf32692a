#!/usr/bin/env bash
# Debian packages okgin needs beyond Python: card designs, fonts (the procedural index styles) and
# backgrounds for the scene generator, rsvg-convert to render them, Chromium for the browser test, and
# the GL and GLib libraries that the opencv-python wheel loads (present on a desktop, absent on a bare
# server). datasets/README.md lists each font package's licence.
set -euo pipefail
packages=(gnome-cards-data kdegames-card-data-kf5 librsvg2-bin chromium pokerth-data mate-backgrounds gimp-data
          libgl1 libglib2.0-0)
packages+=(fonts-dejavu-core fonts-dejavu-extra fonts-liberation fonts-liberation2 fonts-freefont-ttf fonts-urw-base35
  fonts-noto-core fonts-linuxlibertine fonts-ebgaramond fonts-open-sans fonts-lato fonts-cantarell
  fonts-crosextra-carlito fonts-crosextra-caladea fonts-firacode fonts-hack fonts-inconsolata fonts-oxygen
  fonts-quicksand fonts-comfortaa fonts-texgyre fonts-gfs-didot fonts-stix fonts-symbola fonts-sil-gentium
  fonts-sil-charis fonts-bebas-neue fonts-league-spartan fonts-junicode fonts-adf-accanthis fonts-adf-gillius
  fonts-adf-universalis fonts-adf-verana fonts-jura fonts-play fonts-croscore fonts-paratype fonts-cabin
  fonts-mononoki fonts-fantasque-sans fonts-lobster fonts-yanone-kaffeesatz)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
