# Parley in containers.
#
#   docker build -t parley .                 (docker-compose.yml does this)
#
# Stage "build" installs the toolchain and libraries with scripts/deps.sh,
# the same script as `make deps`, then builds and installs like a host
# would. The runtime stage gets only the installed files and the Debian
# packages that own the shared libraries the binaries load, as listed by
# scripts/runtime-packages.sh, so no second package list has to be kept
# in step with the Makefile.

FROM debian:bookworm AS build
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /src
# Dependencies in their own layer: editing sources does not redo them
# (libfaiss_c.a alone takes a while to compile).
COPY scripts/deps.sh scripts/deps.sh
RUN ./scripts/deps.sh
COPY . .
RUN make -j"$(nproc)" \
 && make install PREFIX=/usr/local DESTDIR=/out \
 && scripts/runtime-packages.sh /out/usr/local/bin/parley-* > /out/runtime-packages

FROM debian:bookworm-slim
ENV DEBIAN_FRONTEND=noninteractive
COPY --from=build /out/runtime-packages /tmp/runtime-packages
RUN apt-get update -q \
 && apt-get install -y -q --no-install-recommends $(cat /tmp/runtime-packages) \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages
COPY --from=build /out/usr/local/ /usr/local/
COPY scripts/docker-agent.sh /usr/local/bin/parley-docker-agent
COPY scripts/docker-broker.sh /usr/local/bin/parley-docker-broker
# A fixed unprivileged user; /var/lib/parley is where agents keep memory
# (a volume in docker-compose.yml, which copies this ownership into it).
RUN useradd --system --user-group --home-dir /var/lib/parley --shell /usr/sbin/nologin parley \
 && install -d -o parley -g parley -m 0700 /var/lib/parley \
 && install -d -o parley -g parley -m 0700 /var/lib/parley-keys /var/lib/parley-team /var/lib/parley-tapkeys
USER parley
WORKDIR /var/lib/parley
# ROUTER (requests), PUB (events), tap.
EXPOSE 5555 5556 5557
CMD ["parley-docker-broker"]
