// Hash maps whose nodes come from a free list of their own instead of malloc. The conversion keeps
// a few entries per parallel region, kernel or task in maps (open until their other half arrives,
// then erased): with malloc and free that was about 150 instructions per entry, a tenth of a
// 2-thread kernel's conversion; from the map's own free list it is a few. Nodes never move (as in
// any std::unordered_map); memory goes back when the map is destroyed.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <new>
#include <unordered_map>
#include <vector>

namespace kob {

// Blocks of equal-sized nodes, handed out and taken back through a free list. One per map (its
// allocator's copies share it); single-threaded, as the map is.
class NodePool {
 public:
  NodePool() = default;
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;
  ~NodePool() {
    for (void* b : blocks_) ::operator delete(b, std::align_val_t{kAlign});
  }

  void* take(std::size_t bytes) {
    if (size_ == 0) size_ = round(bytes);
    if (round(bytes) != size_) return ::operator new(bytes, std::align_val_t{kAlign});  // another node type (not seen)
    if (free_ == nullptr) grow();
    Free* f = free_;
    free_ = f->next;
    return f;
  }
  void give(void* p, std::size_t bytes) {
    if (round(bytes) != size_) {
      ::operator delete(p, std::align_val_t{kAlign});
      return;
    }
    Free* f = static_cast<Free*>(p);
    f->next = free_;
    free_ = f;
  }

 private:
  static constexpr std::size_t kAlign = 16;
  static constexpr std::size_t kBlockNodes = 256;
  struct Free {
    Free* next;
  };
  static std::size_t round(std::size_t bytes) {
    const std::size_t b = bytes < sizeof(Free) ? sizeof(Free) : bytes;
    return (b + kAlign - 1) / kAlign * kAlign;
  }
  void grow() {
    auto* block = static_cast<unsigned char*>(::operator new(size_ * kBlockNodes, std::align_val_t{kAlign}));
    blocks_.push_back(block);
    for (std::size_t i = kBlockNodes; i-- > 0;) {
      Free* f = reinterpret_cast<Free*>(block + i * size_);
      f->next = free_;
      free_ = f;
    }
  }
  std::size_t size_ = 0;  // the node size, set by the first single-node allocation
  Free* free_ = nullptr;
  std::vector<void*> blocks_;
};

// Single nodes from the map's NodePool; arrays (the bucket table) from operator new.
template <class T>
class PoolAllocator {
 public:
  using value_type = T;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;

  PoolAllocator() : pool_(std::make_shared<NodePool>()) {}
  template <class U>
  PoolAllocator(const PoolAllocator<U>& other) noexcept : pool_(other.pool_) {}

  T* allocate(std::size_t n) {
    if (n == 1 && alignof(T) <= 16) return static_cast<T*>(pool_->take(sizeof(T)));
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n == 1 && alignof(T) <= 16) {
      pool_->give(p, sizeof(T));
      return;
    }
    std::allocator<T>().deallocate(p, n);
  }
  // A copied map gets a pool of its own.
  PoolAllocator select_on_container_copy_construction() const { return PoolAllocator(); }

  template <class U>
  bool operator==(const PoolAllocator<U>& other) const noexcept {
    return pool_ == other.pool_;
  }

 private:
  template <class U>
  friend class PoolAllocator;
  std::shared_ptr<NodePool> pool_;
};

template <class K, class V, class Hash = std::hash<K>, class Eq = std::equal_to<K>>
using PooledMap = std::unordered_map<K, V, Hash, Eq, PoolAllocator<std::pair<const K, V>>>;

}  // namespace kob
