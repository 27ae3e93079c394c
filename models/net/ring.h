// A FIFO on a growable circular buffer: unlike std::deque it never allocates or frees in steady
// state (the buffer only grows, to the largest backlog seen), so per-packet queues cost no heap.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace fecsim::net {

template <class T>
class ring {
public:
    bool empty() const { return n_ == 0; }
    size_t size() const { return n_; }
    T& front() { return buf_[head_]; }
    const T& front() const { return buf_[head_]; }

    void push_back(T v) {
        if (n_ == buf_.size()) grow();
        buf_[(head_ + n_) & (buf_.size() - 1)] = std::move(v);
        ++n_;
    }

    T pop_front() {
        T v = std::move(buf_[head_]);
        head_ = (head_ + 1) & (buf_.size() - 1);
        --n_;
        return v;
    }

    T& back() { return buf_[(head_ + n_ - 1) & (buf_.size() - 1)]; }
    T& operator[](size_t i) { return buf_[(head_ + i) & (buf_.size() - 1)]; }
    const T& operator[](size_t i) const { return buf_[(head_ + i) & (buf_.size() - 1)]; }

    T pop_back() {
        --n_;
        return std::move(buf_[(head_ + n_) & (buf_.size() - 1)]);
    }

    void push_front(T v) {
        if (n_ == buf_.size()) grow();
        head_ = (head_ - 1) & (buf_.size() - 1);
        buf_[head_] = std::move(v);
        ++n_;
    }

    void reserve(size_t n) {
        while (buf_.size() < n) grow();
    }

    void clear() {
        while (n_ > 0) pop_front();
    }

private:
    // The capacity is always a power of two (16, doubled), so indices wrap with a mask.
    void grow() {
        std::vector<T> bigger(buf_.empty() ? 16 : 2 * buf_.size());
        for (size_t i = 0; i < n_; ++i) bigger[i] = std::move(buf_[(head_ + i) & (buf_.size() - 1)]);
        buf_ = std::move(bigger);
        head_ = 0;
    }

    std::vector<T> buf_;
    size_t head_ = 0, n_ = 0;
};

}  // namespace fecsim::net
