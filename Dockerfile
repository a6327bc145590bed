# The users service in a container: docker build -t users .
# Two stages. The first builds a static binary with the official Go image; the second holds only
# that binary and an empty /data folder, so the image has no shell, no package manager and nothing
# else to patch. README.md, "Run it in a container", shows how to run it.

# The official Go image builds the binary, named in full with its registry: Podman as Debian
# configures it has no registry to search for a short name such as golang:1.26, and refuses it at
# once; Docker takes the full name as it takes the short one. go.mod names the oldest Go that
# builds the service; any newer one does too.
FROM docker.io/library/golang:1.26 AS build
# No cgo, so the binary needs no C library and runs in an empty image. GOTOOLCHAIN=local builds
# with the image's own Go and never downloads another one.
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
WORKDIR /src
# The service uses the standard library only: go.mod has no require line, so there is no go.sum
# and nothing to download. The build needs the package's own .go files and web/, which go:embed
# puts into the binary (.dockerignore leaves the tests and everything else out).
COPY go.mod ./
COPY *.go ./
COPY web/ web/
# RUN lines in exec form (a JSON list) need no shell in the build image. -trimpath leaves the
# build's folders out of the binary, so the same source gives the same binary anywhere.
RUN ["go", "build", "-trimpath", "-o", "/out/users", "."]
# The folder for -data /data/users.json, made here because scratch has no mkdir.
RUN ["mkdir", "/out/data"]

FROM scratch
COPY --from=build /out/users /users
# The data folder belongs to the user the service runs as, so it may write there: the data file
# is written to a temporary file beside it and renamed over it, which needs the folder, not only
# the file, to be writable.
COPY --from=build --chown=65532:65532 /out/data /data
# A numeric user and group that are not root. scratch has no /etc/passwd, so a name could not be
# looked up; 65532 is the "nonroot" user of distroless images.
USER 65532:65532
EXPOSE 8080
# In a container the service must listen on every address of the container's own network, where
# the published port arrives: localhost would be unreachable from outside. Flags given after the
# image name are added to these (docker run users -sample-data).
ENTRYPOINT ["/users", "-addr", ":8080"]
# docker stop sends SIGTERM (the default stop signal): the service stops accepting, lets the
# requests in flight finish for up to 10 s, and exits 0. docker stop waits 10 s before SIGKILL.
